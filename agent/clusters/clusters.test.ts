import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { startTestProxy } from '../../test/support/proxy.ts';
import { connectCluster, kubeErrorStatus, type ClusterSpec, type ConnectDeps, type RetrySettings } from './index.ts';

const TOKEN = 'cluster-client-test-token-0123456789';
const logger = createLogger({ level: 'silent' });
const noRetries: RetrySettings = { enabled: false, maxRetries: 3, backOffMs: 1, retryAnyError: false, retryableErrors: ['timeout'] };
/** Resolves plain paths only: references are the secret resolver's own tests. */
const plainFiles = { resolveFile: async (value: string) => value };

let server: TestApiServer;
let dir: string;

beforeAll(async () => {
  server = await startTestApiServer({ tls: true, auth: { tokens: { [TOKEN]: { username: 'admin', groups: ['system:masters'] } } } });
  dir = await mkdtemp(join(tmpdir(), 'clusters-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  server.faults.clear();
  server.requests.clear();
});

function spec(over: Partial<ClusterSpec> = {}): ClusterSpec {
  return { account: 'acme', context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [], ...over };
}

function deps(over: Partial<ConnectDeps> = {}): ConnectDeps {
  return { secrets: plainFiles, kubernetesNoProxy: false, retries: noRetries, clock: systemClock, logger, ...over };
}

async function kubeconfigFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, { mode: 0o600 });
  return path;
}

describe('connectCluster with a kubeconfig file', () => {
  it('reaches the API server with the token and CA of the file, at the context asked for', async () => {
    const doc = server.kubeconfig({ token: TOKEN, name: 'blue' });
    const file = await kubeconfigFile('two-contexts.yml', server.kubeconfigYaml({ token: 'not-this-one-0000000000', name: 'green' }));
    // A file whose current context is another one: the account's context decides.
    const merged = { ...doc, clusters: [...doc.clusters], users: [...doc.users], contexts: [...doc.contexts] };
    const other = server.kubeconfig({ token: 'wrong-token-000000000000', name: 'green' });
    merged.clusters.push(...other.clusters);
    merged.users.push(...other.users);
    merged.contexts.push(...other.contexts);
    merged['current-context'] = 'green';
    await writeFile(file, JSON.stringify(merged));
    const client = await connectCluster(spec({ kubeConfigFile: file, context: 'blue' }), deps());
    try {
      expect((await client.version()).gitVersion).toMatch(/^v1\./);
      const namespaces = (await client.request({ path: '/api/v1/namespaces' })).json<{ items: { metadata: { name: string } }[] }>();
      expect(namespaces.items.map((n) => n.metadata.name)).toContain('kube-system');
    } finally {
      client.close();
    }
  });

  it('names a missing context and the contexts the file has', async () => {
    const file = await kubeconfigFile('one.yml', server.kubeconfigYaml({ token: TOKEN, name: 'only' }));
    await expect(connectCluster(spec({ kubeConfigFile: file, context: 'prod' }), deps())).rejects.toThrow(
      `account acme: context prod is not in kubeconfig ${file} (it has: only)`,
    );
  });

  it('names an unreadable file by reference, and never quotes a broken file that holds a token', async () => {
    await expect(connectCluster(spec({ kubeConfigFile: join(dir, 'absent.yml') }), deps())).rejects.toThrow(/absent\.yml cannot be read: ENOENT/);
    const broken = await kubeconfigFile('broken.yml', `users:\n- name: u\n  user:\n    token: ${TOKEN}\n  - : [\n`);
    const error = await connectCluster(spec({ kubeConfigFile: broken }), deps()).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/is not valid YAML \(line \d+\)/);
    expect((error as Error).message).not.toContain(TOKEN);
  });

  it('refuses an account with neither a service account nor a kubeconfig', async () => {
    await expect(connectCluster(spec(), deps())).rejects.toMatchObject({ code: 'invalid_input', message: 'account acme: neither serviceAccount nor a kubeconfig file is set' });
  });

  it('reports a refused token as unauthenticated with the status, without the token', async () => {
    const file = await kubeconfigFile('bad-token.yml', server.kubeconfigYaml({ token: 'revoked-token-0000000000000' }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps());
    const error = await client.version().catch((e: unknown) => e);
    client.close();
    expect(error).toMatchObject({ code: 'unauthenticated' });
    expect(kubeErrorStatus(error)).toBe(401);
    expect((error as Error).message).not.toContain('revoked-token');
  });
});

describe('insecure', () => {
  it('a server certificate the kubeconfig cannot verify fails, and insecure: true accepts it', async () => {
    const doc = server.kubeconfig({ token: TOKEN });
    delete doc.clusters[0]!.cluster['certificate-authority-data'];
    const file = await kubeconfigFile('no-ca.yml', JSON.stringify(doc));
    const strict = await connectCluster(spec({ kubeConfigFile: file }), deps());
    await expect(strict.version()).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/certificate/) });
    strict.close();
    const relaxed = await connectCluster(spec({ kubeConfigFile: file, insecure: true }), deps());
    await expect(relaxed.version()).resolves.toMatchObject({ major: '1' });
    relaxed.close();
  });
});

describe('serviceAccount', () => {
  it('uses the pod service account token and CA against KUBERNETES_SERVICE_HOST', async () => {
    const saDir = join(dir, 'sa');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(saDir, { recursive: true });
    await writeFile(join(saDir, 'token'), TOKEN);
    await writeFile(join(saDir, 'ca.crt'), server.ca ?? '');
    const url = new URL(server.url);
    const client = await connectCluster(
      spec({ serviceAccount: true }),
      deps({ inCluster: { env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port }, dir: saDir } }),
    );
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    client.close();
  });

  it('says so when the agent does not run in a cluster', async () => {
    await expect(connectCluster(spec({ serviceAccount: true }), deps({ inCluster: { env: {}, dir } }))).rejects.toThrow(
      'account acme: serviceAccount is true but the agent does not run in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)',
    );
  });
});

describe('kubernetes.retries', () => {
  const versionPath = { path: '/version' };

  it('retries an error containing a retryable substring, up to maxRetries tries in all', async () => {
    const file = await kubeconfigFile('retry.yml', server.kubeconfigYaml({ token: TOKEN }));
    const retries: RetrySettings = { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: false, retryableErrors: ['timeout', 'deadline exceeded'] };
    let counted = 0;
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps({ retries, onRetry: () => counted++ }));
    server.faults.fail(versionPath, 504, 2, { message: 'Timeout: request did not complete within requested timeout' });
    await expect(client.version()).resolves.toMatchObject({ major: '1' });
    expect(server.requests.count(versionPath)).toBe(3);
    expect(counted).toBe(2);

    server.requests.clear();
    server.faults.fail(versionPath, 504, 5, { message: 'Timeout: request did not complete within requested timeout' });
    await expect(client.version()).rejects.toMatchObject({ code: 'timeout' });
    expect(server.requests.count(versionPath)).toBe(3);
    client.close();
  });

  it('does not retry an error without a retryable substring unless retryAnyError is true', async () => {
    const file = await kubeconfigFile('retry-any.yml', server.kubeconfigYaml({ token: TOKEN }));
    const base: RetrySettings = { enabled: true, maxRetries: 2, backOffMs: 1, retryAnyError: false, retryableErrors: ['timeout'] };
    const strict = await connectCluster(spec({ kubeConfigFile: file }), deps({ retries: base }));
    server.faults.fail(versionPath, 500, 1, { message: 'etcdserver: leader changed' });
    await expect(strict.version()).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('500 Internal error occurred: etcdserver: leader changed') });
    expect(server.requests.count(versionPath)).toBe(1);
    strict.close();

    server.requests.clear();
    const any = await connectCluster(spec({ kubeConfigFile: file }), deps({ retries: { ...base, retryAnyError: true } }));
    server.faults.fail(versionPath, 500, 1, { message: 'etcdserver: leader changed' });
    await expect(any.version()).resolves.toMatchObject({ major: '1' });
    expect(server.requests.count(versionPath)).toBe(2);
    any.close();
  });

  it('tries once when retries are disabled', async () => {
    const file = await kubeconfigFile('retry-off.yml', server.kubeconfigYaml({ token: TOKEN }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps({ retries: { ...noRetries, retryAnyError: true } }));
    server.faults.fail(versionPath, 504, 1, { message: 'Timeout: request did not complete' });
    await expect(client.version()).rejects.toMatchObject({ code: 'timeout' });
    expect(server.requests.count(versionPath)).toBe(1);
    client.close();
  });
});

describe('watch streams', () => {
  it('streams one event per line as objects change, and close() ends it', async () => {
    const file = await kubeconfigFile('watch.yml', server.kubeconfigYaml({ token: TOKEN }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps());
    const list = (await client.request({ path: '/api/v1/namespaces/default/configmaps' })).json<{ metadata: { resourceVersion: string } }>();
    const stream = await client.stream({ path: '/api/v1/namespaces/default/configmaps', query: { watch: true, resourceVersion: list.metadata.resourceVersion } });
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' }, data: { a: '1' } });
    const seen: string[] = [];
    for await (const line of stream.lines) {
      const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
      seen.push(`${event.type} ${event.object.metadata.name}`);
      stream.close();
    }
    expect(seen).toEqual(['ADDED one']);
    client.close();
  });

  it('gives a flood of lines in large batches of whole lines, and a lone event at once', async () => {
    for (let i = 0; i < 400; i++) server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `flood-${i}`, namespace: 'default' }, data: { blob: 'x'.repeat(1000) } });
    const file = await kubeconfigFile('batches.yml', server.kubeconfigYaml({ token: TOKEN }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps());
    // The initial events of a WatchList: about 500 KB that arrive as TLS records of 16 KB at most.
    const stream = await client.stream({ path: '/api/v1/namespaces/default/configmaps', query: { watch: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true } });
    const batches = stream.batches[Symbol.asyncIterator]();
    const nextLines = async () => {
      const got = await batches.next();
      if (got.done === true) throw new Error('the watch ended');
      expect(got.value[got.value.length - 1]).toBe(10);
      const lines = got.value.toString('utf8').split('\n').slice(0, -1);
      return { size: got.value.length, events: lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; annotations?: Record<string, string> } } }) };
    };
    const sizes: number[] = [];
    const names: string[] = [];
    for (let ended = false; !ended; ) {
      const { size, events } = await nextLines();
      sizes.push(size);
      names.push(...events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name));
      ended = events.some((e) => e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true');
    }
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => n.startsWith('flood-'))).toHaveLength(400);
    expect(Math.max(...sizes)).toBeGreaterThan(64 * 1024);
    // Quiet now: one change comes as a batch of its own, without waiting for more.
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lone', namespace: 'default' } });
    expect((await nextLines()).events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED lone']);
    stream.close();
    client.close();
  });

  it('a watch closed by its reader in the middle of a flood ends quietly, leaving no read behind to fail', async () => {
    // Lines larger than a batch: each batch is handed on while the next read of the body is already under way.
    server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'huge' } });
    for (let i = 0; i < 6; i++) server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `huge-${i}`, namespace: 'huge' }, data: { blob: 'x'.repeat(300_000) } });
    const file = await kubeconfigFile('huge.yml', server.kubeconfigYaml({ token: TOKEN }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps());
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (let round = 0; round < 5; round++) {
        const stream = await client.stream({ path: '/api/v1/namespaces/huge/configmaps', query: { watch: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true } });
        for await (const batch of stream.batches) {
          expect(batch.length).toBeGreaterThan(256 * 1024);
          // The reader stops, as a cache worker does when its account is taken away mid-sync.
          stream.close();
          break;
        }
      }
      // Whatever the destroyed responses still had to say has been said by now.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      client.close();
    }
  });

  it('a refused watch is an error with the HTTP status (410 Gone after compaction)', async () => {
    const file = await kubeconfigFile('gone.yml', server.kubeconfigYaml({ token: TOKEN }));
    const client = await connectCluster(spec({ kubeConfigFile: file }), deps());
    const list = (await client.request({ path: '/api/v1/namespaces/default/configmaps' })).json<{ metadata: { resourceVersion: string } }>();
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two', namespace: 'default' } });
    server.faults.compact();
    const error = await client.stream({ path: '/api/v1/namespaces/default/configmaps', query: { watch: true, resourceVersion: list.metadata.resourceVersion } }).then(
      async (s) => {
        // A server may accept the watch and send the 410 as an ERROR event instead.
        for await (const line of s.lines) {
          s.close();
          return JSON.parse(line) as { type: string; object: { code: number } };
        }
        return undefined;
      },
      (e: unknown) => e,
    );
    client.close();
    const status = kubeErrorStatus(error) ?? (error as { object?: { code?: number } } | undefined)?.object?.code;
    expect(status).toBe(410);
  });
});

describe('proxies (docs/agent-config.md#proxies)', () => {
  it('goes through HTTPS_PROXY, and straight to the cluster with noProxy or kubernetes.noProxy', async () => {
    const proxy = await startTestProxy();
    const saved = { https_proxy: process.env.https_proxy, HTTPS_PROXY: process.env.HTTPS_PROXY, no_proxy: process.env.no_proxy, NO_PROXY: process.env.NO_PROXY };
    process.env.https_proxy = proxy.url;
    delete process.env.HTTPS_PROXY;
    delete process.env.no_proxy;
    delete process.env.NO_PROXY;
    try {
      const file = await kubeconfigFile('proxied.yml', server.kubeconfigYaml({ token: TOKEN }));
      const viaProxy = await connectCluster(spec({ kubeConfigFile: file }), deps());
      await viaProxy.version();
      viaProxy.close();
      expect(proxy.seen).toEqual([new URL(server.url).host]);
      for (const bypass of [deps({ kubernetesNoProxy: true }), deps()]) {
        const direct = await connectCluster(spec({ kubeConfigFile: file, noProxy: bypass.kubernetesNoProxy ? false : true }), bypass);
        await direct.version();
        direct.close();
      }
      expect(proxy.seen).toHaveLength(1);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await proxy.close();
    }
  });
});
