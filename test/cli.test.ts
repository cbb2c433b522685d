/**
 * `vendorctl` as operators run it: the real CLI process against a real control plane (`npm start`
 * with an agent and the test Kubernetes API server), every command's exit code and output.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { VERSION } from '../shared/version.ts';
import { startTestApiServer, type TestApiServer } from './kube/index.ts';
import { PLANE_AUTH, PLANE_TOKEN, startPlane, stopAll, stopPlane, type RunningPlane } from './support/control-plane-process.ts';

const CLI = join(import.meta.dirname, '../cli/main.ts');
const KUBE_TOKEN = 'cli-cluster-token-00000000000001';

let kube: TestApiServer;
let plane: RunningPlane;
let dir: string;
/** Everything any run printed, to check that the token never shows. */
const printed: string[] = [];

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs the CLI as a process; asynchronously, since the test API server it reaches through the agent runs in this one. */
async function vendorctl(args: readonly string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  const { VENDOR_API_URL: _u, VENDOR_API_TOKEN: _t, ...inherited } = process.env;
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...inherited, VENDOR_API_URL: plane.url, VENDOR_API_TOKEN: PLANE_TOKEN, ...options.env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(options.input ?? '');
  const [code] = (await once(child, 'close')) as [number | null];
  printed.push(out, err);
  return { code, out, err };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function json(pending: Promise<Run>): Promise<unknown> {
  const run = await pending;
  expect(run.code, run.err).toBe(0);
  return JSON.parse(run.out);
}

beforeAll(async () => {
  kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: 'developer' } } });
  dir = mkdtempSync(join(tmpdir(), 'vendorctl-'));
  const kubeconfig = kube.writeKubeconfig(join(dir, 'kubeconfig'), { token: KUBE_TOKEN });
  writeFileSync(join(dir, 'vendor-driver.yml'), `${PLANE_AUTH}kubernetes:\n  accounts:\n    - name: prod\n      kubeconfigFile: /k/prod.yml\n    - name: stage\n`);
  plane = await startPlane(dir, { KUBECONFIG: kubeconfig });
  await vi.waitFor(() => expect(plane.output()).toMatch(/\[agent\] .*connected to the driver/), { timeout: 20_000 });
});

afterAll(async () => {
  if (plane !== undefined) await stopPlane(plane.child);
  stopAll();
  await kube?.close();
  expect(printed.join('')).not.toContain(PLANE_TOKEN);
});

// Each test starts several CLI processes, each a Node start-up on a machine that may be busy.
describe('vendorctl against a running control plane', { timeout: 120_000 }, () => {
  it('prints the one version, the same as the API document says', async () => {
    expect(await vendorctl(['--version'])).toEqual({ code: 0, out: `vendorctl ${VERSION}\n`, err: '' });
    const doc = (await (await fetch(`${plane.url}/openapi.json`)).json()) as { info: { version: string } };
    expect(doc.info.version).toBe(VERSION);
  });

  it('lists and gets accounts as a table, JSON or YAML', async () => {
    const table = await vendorctl(['accounts', 'list']);
    expect(table.code).toBe(0);
    const lines = table.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +SOURCE +STATE +ZONE +AGENTS +MESSAGE$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['local', 'prod', 'stage']);

    expect((await json(vendorctl(['accounts', 'list', '-o', 'json'])) as { name: string }[]).map((a) => a.name)).toEqual(['local', 'prod', 'stage']);
    const yaml = await vendorctl(['accounts', 'get', 'prod', '--output', 'yaml']);
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.out)).toMatchObject({ name: 'prod', source: 'driver', config: { kubeconfigFile: '/k/prod.yml' } });
  });

  it('registers from YAML or JSON as written, activates and removes', async () => {
    const one = file('stage.yaml', 'name: stage\nzoneId: vendor-agent_local\n');
    const registered = await vendorctl(['accounts', 'register', '-f', one]);
    expect(registered.code, registered.err).toBe(0);
    expect(registered.out).toMatch(/\nstage +driver +INACTIVE +vendor-agent_local /);

    const list = file('accounts.json', JSON.stringify([{ name: 'local' }]));
    expect(await json(vendorctl(['accounts', 'register', '-f', list, '-o', 'json']))).toMatchObject([{ name: 'local', state: 'INACTIVE' }]);
    expect((await vendorctl(['accounts', 'register', '-f', '-'], { input: '- name: prod\n' })).code).toBe(0);

    const activated = await vendorctl(['accounts', 'activate', 'local']);
    expect(activated.code, activated.err).toBe(0);
    expect(activated.out).toMatch(/\nlocal +driver +ACTIVE /);
    await vi.waitFor(async () => expect(await json(vendorctl(['accounts', 'get', 'local', '-o', 'json']))).toMatchObject({ agents: [{ agentId: 'local-agent', caching: true }] }), {
      timeout: 20_000,
      interval: 200,
    });
    expect((await vendorctl(['accounts', 'get', 'local'])).out).toContain('local-agent (caching)');

    expect(await json(vendorctl(['accounts', 'remove', 'prod', '-o', 'json']))).toMatchObject({ name: 'prod' });
    expect(await json(vendorctl(['accounts', 'get', 'prod', '-o', 'json']))).not.toHaveProperty('state');
  });

  it('deploys to SUCCEEDED with --wait, gets the operation, and exits 1 for one that fails', async () => {
    await vi.waitFor(async () => expect(await json(vendorctl(['accounts', 'get', 'local', '-o', 'json']))).toMatchObject({ state: 'ACTIVE', agents: [{ caching: true }] }), {
      timeout: 20_000,
      interval: 200,
    });
    const manifests = file('web.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: "1"\n');
    const deployed = await vendorctl(['operations', 'deploy', 'local', '-f', manifests, '-n', 'default', '--idempotency-key', 'cli-deploy-1', '--wait=30']);
    expect(deployed.code, deployed.err).toBe(0);
    expect(deployed.out).toMatch(/^ID +ACCOUNT +ACTION +STATE +OBJECTS +ERROR +MESSAGE\n\w+ +local +deploy +SUCCEEDED +1 +- /);
    expect(deployed.out).toMatch(/\nConfigMap +default +web +created +201 /);
    expect(kube.requests.log().some((r) => r.verb === 'patch' && r.name === 'web' && r.user === 'developer')).toBe(true);

    const id = /\n(\w+) +local/.exec(deployed.out)![1]!;
    expect(await json(vendorctl(['operations', 'get', id, '-o', 'json']))).toMatchObject({ id, state: 'SUCCEEDED', idempotencyKey: 'cli-deploy-1' });
    const scaled = await vendorctl(['operations', 'scale', 'local', 'configmap/web', '-n', 'default', '--replicas', '2', '--wait']);
    expect(scaled.code).toBe(1);
    expect(scaled.err).toMatch(/^operation \w+ ended FAILED/);

    const widget = file('widget.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n');
    const failed = await vendorctl(['operations', 'deploy', 'local', '-f', widget, '--wait']);
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/ FAILED /);
    expect(failed.err).toMatch(/^operation \w+ ended FAILED: /);
  });

  it('shows cached resources and the cache health', async () => {
    await vi.waitFor(async () => expect((await vendorctl(['resources', 'local', 'configmap', '--namespace', 'default'])).out).toMatch(/\nConfigMap +v1 +default +web /), {
      timeout: 20_000,
      interval: 250,
    });
    expect(await json(vendorctl(['resources', 'local', 'configmap', '--name', 'web', '-o', 'json']))).toMatchObject([{ kind: 'ConfigMap', name: 'web' }]);
    const cache = await vendorctl(['cache', 'local']);
    expect(cache.code, cache.err).toBe(0);
    expect(cache.out).toMatch(/^account local, caching agent local-agent, reported /);
    expect(cache.out).toMatch(/\nKIND +GROUP +WATCHING +OBJECTS +LAST EVENT +RELISTS +LAST ERROR\n/);
    expect(await vendorctl(['agent-identities', 'list', '-o', 'json'])).toMatchObject({ code: 0, out: '[]\n' });
  });

  it('filters the account list, counts the accounts, shows the live agent and an account\'s operations', async () => {
    // After the tests above: local ACTIVE, stage INACTIVE in vendor-agent_local, prod removed (no state).
    expect((await json(vendorctl(['accounts', 'list', '--state', 'ACTIVE,INACTIVE', '--source', 'driver', '-o', 'json']))) as { name: string }[]).toMatchObject([
      { name: 'local' },
      { name: 'stage' },
    ]);
    const byZone = await vendorctl(['accounts', 'list', '--zone', 'vendor-agent_local', '--prefix', 'st']);
    expect(byZone.code, byZone.err).toBe(0);
    expect(byZone.out.trimEnd().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['stage']);

    expect(await json(vendorctl(['accounts', 'summary', '-o', 'json']))).toMatchObject({ total: 3, byState: { ACTIVE: 1, INACTIVE: 1 }, withoutState: 1, bySource: { driver: 3 } });
    const summary = await vendorctl(['accounts', 'summary']);
    expect(summary.out).toMatch(/^BY +VALUE +ACCOUNTS\ntotal +- +3\n/);
    expect(summary.out).toMatch(/\nstate +ACTIVE +1\n/);

    const agents = await vendorctl(['agents', 'list']);
    expect(agents.code, agents.err).toBe(0);
    expect(agents.out).toMatch(/^AGENT ID +ZONE +IDENTITY +VERSION +CONNECTED SINCE +LAST HEARTBEAT +ACCOUNTS \(HELD\/CACHING\)\nlocal-agent +\S+ +\S+ +\S+ +\S+ +\S+ +1\/1\n$/);
    const zone = (await json(vendorctl(['agents', 'get', 'local-agent', '-o', 'json']))) as { zoneId: string; accounts: unknown[] };
    expect(zone.accounts).toEqual([{ name: 'local', caching: true }]);
    expect(await json(vendorctl(['agents', 'list', '--zone', zone.zoneId, '-o', 'json']))).toMatchObject([{ agentId: 'local-agent' }]);
    expect(await json(vendorctl(['agents', 'list', '--zone', 'vendor-agent_nowhere', '-o', 'json']))).toEqual([]);
    const one = await vendorctl(['agents', 'get', 'local-agent']);
    expect(one.out).toMatch(/\nACCOUNT +CACHING\nlocal +true\n$/);
    expect((await vendorctl(['agents', 'get', 'no-such-agent'])).err).toMatch(/\(404 not_found\)\n$/);

    const operations = (await json(vendorctl(['operations', 'list', 'local', '-o', 'json']))) as { action: string; state: string; idempotencyKey: string }[];
    expect(operations.map((o) => o.state)).toEqual(['FAILED', 'FAILED', 'SUCCEEDED']);
    expect(operations[2]).toMatchObject({ action: 'deploy', idempotencyKey: 'cli-deploy-1' });
    const succeeded = await vendorctl(['operations', 'list', 'local', '--state', 'SUCCEEDED']);
    expect(succeeded.out).toMatch(/^ID +ACTION +STATE +OBJECTS +CREATED +ERROR +MESSAGE\n\w+ +deploy +SUCCEEDED +1 +\S+ +- /);
    expect(succeeded.out.trimEnd().split('\n')).toHaveLength(2);
  });

  it('exits 2 with a usage message before anything is sent', async () => {
    const usage = async (args: string[], message: RegExp) => {
      const run = await vendorctl(args);
      expect(run.code, run.out).toBe(2);
      expect(run.err).toMatch(message);
      expect(run.out).toBe('');
    };
    await usage(['acounts', 'list'], /^error: unknown command: acounts\n/);
    await usage(['accounts', 'frobnicate'], /^error: unknown command: accounts frobnicate\n/);
    await usage(['accounts', 'get'], /^error: missing argument: vendorctl accounts get <name>\n/);
    await usage(['accounts', 'list', '-o', 'xml'], /^error: --output: must be one of table, json, yaml, got "xml"\n/);
    await usage(['accounts', 'list', '--replicas', '3'], /^error: accounts list does not take --replicas\nsee: vendorctl accounts list --help\n/);
    await usage(['operations', 'scale', 'local', 'deployment/web'], /^error: operations scale needs --replicas <n>\n/);
    await usage(['operations', 'scale', 'local', 'deployment/web', '--replicas', 'many'], /^error: --replicas: must be a whole number from 0 to 1000000, got "many"\n/);
    await usage(['operations', 'delete', 'local', 'widget/w'], /--api-version/);
    await usage(['operations', 'deploy', 'local', '-f', join(dir, 'missing.yaml')], /^error: cannot read file .*missing\.yaml: ENOENT\n/);
    await usage(['accounts', 'register', '-f', file('bad.yaml', '- name: stage\n  zoneId: "not a zone"\n  color: red\n')], /^error: .*bad\.yaml does not hold account records.*\n {2}\[0\]\.zoneId: .+\n {2}\[0\]\.color: unknown field\n/);
    await usage(['accounts', 'list', '--token', PLANE_TOKEN], /^error: there is no --token flag: give the token in VENDOR_API_TOKEN or a file named by --token-file\n/);
    await usage(['accounts', 'list', `--token=${PLANE_TOKEN}`], /there is no --token flag/);
    const help = await vendorctl(['operations', 'deploy', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: vendorctl operations deploy <account> -f <manifests.yaml>\n/);
    expect(help.out).toContain('--wait[=SECONDS]');
  });

  it('exits 3 with the problem title, detail and field errors when the API refuses', async () => {
    const unknown = await vendorctl(['accounts', 'register', '-f', file('ghost.yaml', 'name: ghost\n')]);
    expect(unknown.code).toBe(3);
    expect(unknown.err).toMatch(/^error: Not a driver-defined account: .*ghost.* \(400 unknown_account\)\n {2}\[0\]\.name: .*ghost.*\n {2}names: ghost\n$/);

    const badState = await vendorctl(['accounts', 'list', '--state', 'SLEEPING']);
    expect(badState.code).toBe(3);
    expect(badState.err).toMatch(/\(400 invalid_input\)\n {2}state: must be one or more of INACTIVE, ACTIVE, FAILED, separated by commas\n/);
    expect(badState.out).toBe('');
    const badOperationState = await vendorctl(['operations', 'list', 'local', '--state', 'DONE']);
    expect(badOperationState.code).toBe(3);
    expect(badOperationState.err).toMatch(/\(400 invalid_input\)\n {2}state: /);

    const missing = await vendorctl(['accounts', 'get', 'nowhere']);
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(/\(404 not_found\)\n$/);

    const wrongToken = 'wrong-token-0123456789abcdef0123456789';
    const refused = await vendorctl(['accounts', 'list'], { env: { VENDOR_API_TOKEN: wrongToken } });
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/\(401 unauthenticated\)\n$/);
    expect(refused.err).not.toContain(wrongToken);

    const closed = `http://127.0.0.1:${await closedPort()}`;
    const noServer = await vendorctl(['accounts', 'list', '--server', closed]);
    expect(noServer.code).toBe(3);
    expect(noServer.err).toBe(`error: cannot reach the API at ${closed}: ECONNREFUSED\n`);
  });

  it('reads the token from --token-file, and never prints it', async () => {
    const tokenFile = file('token', `${PLANE_TOKEN}\n`);
    const run = await vendorctl(['accounts', 'list', '--token-file', tokenFile, '-o', 'json'], { env: { VENDOR_API_TOKEN: '' } });
    expect(run.code, run.err).toBe(0);
    expect((await vendorctl(['accounts', 'list'], { env: { VENDOR_API_TOKEN: '' } })).code).toBe(3);
  });
});
