/**
 * Credentials the agent obtains itself: exec credential plugins (refreshed ahead of their expiry) and
 * the gcp auth provider with `oAuthScopes`, against the test API server and local token endpoints.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { generateKeyPairSync, createVerify } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { createLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { refreshAt } from './credentials.ts';
import { DEFAULT_GCP_SCOPES, gcpScopes, jsonPathValue } from './gcp-credentials.ts';
import { connectCluster, kubeErrorStatus, type ClusterSpec, type ConnectDeps } from './index.ts';

const logger = createLogger({ level: 'silent' });
const TOKENS = ['exec-token-1', 'exec-token-2', 'exec-token-3', 'gcp-sa-token', 'gcp-vm-token', 'gcp-cmd-token', 'gcp-cached-token'];
let server: TestApiServer;
let dir: string;

beforeAll(async () => {
  server = await startTestApiServer({ tls: true, auth: { tokens: Object.fromEntries(TOKENS.map((t) => [t, { username: 'admin', groups: ['system:masters'] }])) } });
  dir = await mkdtemp(join(tmpdir(), 'credentials-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const spec = (kubeConfigFile: string, oAuthScopes: string[] = []): ClusterSpec => ({ account: 'acme', kubeConfigFile, context: '', serviceAccount: false, insecure: false, noProxy: true, oAuthScopes });
const deps = (over: Partial<ConnectDeps> = {}): ConnectDeps => ({
  secrets: { resolveFile: async (v: string) => v },
  kubernetesNoProxy: true,
  retries: { enabled: false, maxRetries: 1, backOffMs: 1, retryAnyError: false, retryableErrors: [] },
  clock: systemClock,
  logger,
  ...over,
});

/** A kubeconfig for the test server whose user is `user`. */
async function kubeconfigWithUser(name: string, user: Record<string, unknown>): Promise<string> {
  const doc = server.kubeconfig();
  doc.users = [{ name: 'test', user } as never];
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(doc));
  return path;
}

/**
 * An exec plugin: prints exec-token-<n> (n counted in a file, starting at `first`), expiring
 * EXPIRES_IN_MS from now, and keeps the KUBERNETES_EXEC_INFO it was given.
 */
async function plugin(name: string, first = 1): Promise<{ path: string; runs(): Promise<number>; info(): Promise<unknown> }> {
  const counter = join(dir, `${name}.count`);
  const info = join(dir, `${name}.info`);
  await writeFile(counter, String(first - 1));
  const path = join(dir, `${name}.mjs`);
  await writeFile(
    path,
    `import { readFileSync, writeFileSync } from 'node:fs';
const n = Number(readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
writeFileSync(${JSON.stringify(counter)}, String(n));
writeFileSync(${JSON.stringify(info)}, process.env.KUBERNETES_EXEC_INFO ?? '');
if (process.env.FAIL) { process.stderr.write('plugin says no\\n'); process.exit(3); }
const expiresIn = Number(process.env.EXPIRES_IN_MS);
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token-' + n, expirationTimestamp: new Date(Date.now() + expiresIn).toISOString() } }));
`,
  );
  return {
    path,
    runs: async () => Number(await readFile(counter, 'utf8')) - (first - 1),
    info: async () => JSON.parse(await readFile(info, 'utf8')),
  };
}

const execUser = (script: string, env: Record<string, string>) => ({
  exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script], env: Object.entries(env).map(([name, value]) => ({ name, value })) },
});

describe('exec credential plugins', () => {
  it('client-node reuses a plugin credential until it has expired, and runs the plugin again only after', async () => {
    const p = await plugin('client-node');
    const kc = new KubeConfig();
    kc.loadFromFile(await kubeconfigWithUser('client-node.yml', execUser(p.path, { EXPIRES_IN_MS: '3000' })));
    const token = async () => {
      const opts: { headers?: Record<string, string> } = {};
      await kc.applyToHTTPSOptions(opts as never);
      return opts.headers?.Authorization;
    };
    expect(await token()).toBe('Bearer exec-token-1');
    // Close to its expiry, client-node still hands out the same credential.
    expect(await token()).toBe('Bearer exec-token-1');
    expect(await p.runs()).toBe(1);
    await new Promise((r) => setTimeout(r, 3100));
    expect(await token()).toBe('Bearer exec-token-2');
  });

  it('the agent obtains a fresh credential ahead of expiry, once for all waiting requests', async () => {
    const p = await plugin('ahead');
    const clock = new ManualClock(Date.now());
    const client = await connectCluster(spec(await kubeconfigWithUser('ahead.yml', execUser(p.path, { EXPIRES_IN_MS: '100000' }))), deps({ clock }));
    server.requests.clear();
    await Promise.all(Array.from({ length: 5 }, () => client.version()));
    expect(await p.runs()).toBe(1);
    expect(await p.info()).toEqual({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false } });
    await clock.advance(79_000);
    await client.version();
    expect(await p.runs()).toBe(1);
    // 100 s of life: refreshed 20 s before its end, while it is still valid.
    await clock.advance(2000);
    await Promise.all(Array.from({ length: 5 }, () => client.version()));
    expect(await p.runs()).toBe(2);
    expect(new Set(server.requests.log().map((r) => r.user))).toEqual(new Set(['admin']));
    client.close();
  });

  it('runs the plugin again when the API server refuses its credential', async () => {
    // The plugin's first token is one the server does not accept.
    const p = await plugin('refused', 0);
    const client = await connectCluster(spec(await kubeconfigWithUser('refused.yml', execUser(p.path, { EXPIRES_IN_MS: '3600000' }))), deps());
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    expect(await p.runs()).toBe(2);
    client.close();
  });

  it('reports a failing plugin by command, exit code and its first line of stderr, never its output', async () => {
    const p = await plugin('failing');
    const client = await connectCluster(spec(await kubeconfigWithUser('failing.yml', execUser(p.path, { EXPIRES_IN_MS: '1000', FAIL: '1' }))), deps());
    const error = await client.version().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unauthenticated', message: `account acme: cannot obtain credentials: exec credential plugin ${process.execPath} exited with code 3: plugin says no` });
    expect(kubeErrorStatus(error)).toBeUndefined();
    client.close();
  });

  it('refuses an exec section without a command, naming the account and the user', async () => {
    await expect(connectCluster(spec(await kubeconfigWithUser('no-command.yml', { exec: { apiVersion: 'client.authentication.k8s.io/v1' } })), deps())).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/^account acme: the exec section of user test is not valid: command/),
    });
  });

  it('refreshes a fifth of the lifetime ahead, at most a minute', () => {
    expect(refreshAt(0, 100_000)).toBe(80_000);
    expect(refreshAt(0, 3_600_000)).toBe(3_540_000);
  });
});

describe('the gcp auth provider', () => {
  let endpoint: Server;
  let base = '';
  const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });

  beforeAll(async () => {
    // One local server stands in for Google's token endpoint and for the metadata server.
    endpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', headers: req.headers, body });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/token') {
          const assertion = new URLSearchParams(body).get('assertion') ?? '';
          const [h, p, s] = assertion.split('.');
          const valid = createVerify('RSA-SHA256').update(`${h}.${p}`).verify(publicKey, Buffer.from(s ?? '', 'base64url'));
          res.statusCode = valid ? 200 : 400;
          res.end(valid ? JSON.stringify({ access_token: 'gcp-sa-token', expires_in: 3600, token_type: 'Bearer' }) : JSON.stringify({ error: 'invalid_grant' }));
          return;
        }
        if (req.url?.startsWith('/computeMetadata/v1/instance/service-accounts/default/token') && req.headers['metadata-flavor'] === 'Google') {
          res.end(JSON.stringify({ access_token: 'gcp-vm-token', expires_in: 3599, token_type: 'Bearer' }));
          return;
        }
        res.statusCode = 404;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    base = `127.0.0.1:${(endpoint.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => endpoint.close(() => r())));

  const claims = (body: string) => JSON.parse(Buffer.from((new URLSearchParams(body).get('assertion') ?? '').split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

  it('signs a JWT for the oAuthScopes with the service account key of GOOGLE_APPLICATION_CREDENTIALS', async () => {
    const key = join(dir, 'sa.json');
    await writeFile(key, JSON.stringify({ type: 'service_account', client_email: 'agent@proj.iam.gserviceaccount.com', private_key: privateKey, private_key_id: 'k1', token_uri: `http://${base}/token` }));
    const file = await kubeconfigWithUser('gcp-sa.yml', { 'auth-provider': { name: 'gcp', config: {} } });
    seen.length = 0;
    const client = await connectCluster(spec(file, ['https://www.googleapis.com/auth/cloud-platform.read-only']), deps({ env: { GOOGLE_APPLICATION_CREDENTIALS: key } }));
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    await client.version();
    expect(seen).toHaveLength(1);
    expect(new URLSearchParams(seen[0]!.body).get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(claims(seen[0]!.body)).toMatchObject({ iss: 'agent@proj.iam.gserviceaccount.com', scope: 'https://www.googleapis.com/auth/cloud-platform.read-only', aud: `http://${base}/token` });
    client.close();
  });

  it('asks the metadata server for the scopes when there is no key file', async () => {
    const file = await kubeconfigWithUser('gcp-vm.yml', { 'auth-provider': { name: 'gcp', config: { scopes: 'https://www.googleapis.com/auth/userinfo.email' } } });
    seen.length = 0;
    const client = await connectCluster(spec(file, ['a', 'b']), deps({ env: { HOME: dir, GCE_METADATA_HOST: base } }));
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    expect(seen.map((s) => s.path)).toEqual(['/computeMetadata/v1/instance/service-accounts/default/token?scopes=a%2Cb']);
    client.close();
  });

  it('runs cmd-path and reads the token at token-key', async () => {
    const script = join(dir, 'gcloud.mjs');
    await writeFile(script, `process.stdout.write(JSON.stringify({ credential: { access_token: 'gcp-cmd-token', token_expiry: new Date(Date.now() + 3600000).toISOString() } }));`);
    const file = await kubeconfigWithUser('gcp-cmd.yml', {
      'auth-provider': { name: 'gcp', config: { 'cmd-path': process.execPath, 'cmd-args': script, 'token-key': '{.credential.access_token}', 'expiry-key': '{.credential.token_expiry}' } },
    });
    const client = await connectCluster(spec(file), deps());
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    client.close();
  });

  it('uses the access-token the kubeconfig holds while it has not expired', async () => {
    const file = await kubeconfigWithUser('gcp-cached.yml', {
      'auth-provider': { name: 'gcp', config: { 'access-token': 'gcp-cached-token', expiry: new Date(Date.now() + 3600_000).toISOString(), 'cmd-path': '/does/not/exist' } },
    });
    const client = await connectCluster(spec(file), deps());
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    client.close();
  });

  it('says what the token endpoint refused, without the key', async () => {
    const key = join(dir, 'sa-wrong.json');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    await writeFile(key, JSON.stringify({ type: 'service_account', client_email: 'x@y', private_key: other.privateKey, token_uri: `http://${base}/token` }));
    const client = await connectCluster(spec(await kubeconfigWithUser('gcp-wrong.yml', { 'auth-provider': { name: 'gcp', config: {} } })), deps({ env: { GOOGLE_APPLICATION_CREDENTIALS: key } }));
    const error = (await client.version().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('account acme: cannot obtain credentials: gcp auth provider: the token endpoint (service account key) answered 400 (invalid_grant)');
    expect(error.message).not.toContain('PRIVATE KEY');
    client.close();
  });

  it('chooses oAuthScopes, else the provider scopes, else the defaults', () => {
    expect(gcpScopes({ scopes: 'x, y' }, ['a'])).toEqual(['a']);
    expect(gcpScopes({ scopes: 'x, y' }, [])).toEqual(['x', 'y']);
    expect(gcpScopes({}, [' '])).toEqual(DEFAULT_GCP_SCOPES);
    expect(jsonPathValue({ a: { b: 'c' } }, '{.a.b}')).toBe('c');
  });
});
