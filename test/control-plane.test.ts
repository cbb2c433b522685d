import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXAMPLE_ADMIN_TOKEN } from '../scripts/control-plane.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../functions/app.ts';
import { startTestApiServer, type TestApiServer } from './kube/index.ts';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';
import { PK } from '../shared/table/core/keys.ts';
import { newAccountRecord } from '../shared/table/accounts/records.ts';
import { PLANE_AUTH as AUTH, PLANE_TOKEN as TOKEN, planeHttp as http, runPlaneToExit as refused, startPlane as start, stopAll, stopPlane as stop } from './support/control-plane-process.ts';

afterEach(stopAll);

describe('local control plane (npm start)', () => {
  it('serves the driver config accounts over HTTP and keeps its data across a restart', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts:\n    - name: prod\n      kubeconfigFile: /k/prod.yml\n    - name: stage\n`);
    const first = await start(cwd);
    expect(first.output()).toContain(join(cwd, 'vendor-driver.yml'));
    expect(first.output()).toMatch(/driver listening on 127\.0\.0\.1:\d+ \(gRPC/);
    expect(first.output()).toContain('no agent started: set KUBECONFIG');
    expect(first.output()).toContain('the API accepts the static admin token');
    // A token of the user's own is a credential: the console line names its file, never the token.
    await vi.waitFor(() => expect(first.output()).toContain(`sign in with the api.auth.adminToken of ${join(cwd, 'vendor-driver.yml')}`));
    expect(first.output()).not.toContain(TOKEN);
    expect((await http(`${first.url}/vendor/accounts`, 'GET', undefined, null)).status).toBe(401);
    const list = await http(`${first.url}/vendor/accounts`);
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ total: 2, items: [{ name: 'prod' }, { name: 'stage' }] });
    const post = await http(`${first.url}/vendor/accounts`, 'POST', [{ name: 'prod', zoneId: 'agents_ns' }]);
    expect(post.status).toBe(200);
    expect((await http(`${first.url}/healthz`)).json).toEqual({ status: 'ok' });
    expect(await stop(first.child)).toBe(0);

    // Same data folder: the registration is still there; a changed config file is synced on start.
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts:\n    - name: prod\n      kubeconfigFile: /k/prod.yml\n    - name: dev\n`);
    const second = await start(cwd);
    const prod = await http(`${second.url}/vendor/accounts/prod`);
    expect(prod.json).toMatchObject({ name: 'prod', state: 'INACTIVE', zoneId: 'agents_ns', config: { kubeconfigFile: '/k/prod.yml' } });
    const names = ((await http(`${second.url}/vendor/accounts`)).json.items as { name: string }[]).map((a) => a.name);
    expect(names).toEqual(['dev', 'prod']);
    const patch = await http(`${second.url}/vendor/accounts`, 'PATCH', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(patch.status).toBe(409); // no agent is connected
    expect(await stop(second.child)).toBe(0);
  });

  it('moves the account and operation items of a data folder written before the shards to their shards, keeping what they hold', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts:\n    - name: prod\n      kubeconfigFile: /k/prod.yml\n`);
    // The table as the earlier layout left it: every account item in the one partition `ACCOUNT`.
    const before = await startEmbeddedTable({ path: join(cwd, '.data', 'table') });
    for (const name of ['prod', 'old-one']) {
      const record = { ...newAccountRecord(name, 1), version: 2, registration: { zoneId: 'agents_ns', at: 1 } };
      await before.client.send(new PutCommand({ TableName: before.tableName, Item: { pk: PK.unshardedAccount, sk: name, ...record } }));
    }
    // And an operation of prod, finished, as that layout kept it: in the one partition `OPERATION`.
    const operation = { id: 'a'.repeat(32), account: 'prod', action: 'scale', objects: 1, state: 'SUCCEEDED', attempt: 1, idempotencyKey: 'k', requestHash: 'h', createdAt: 1, updatedAt: 2, finishedAt: 2 };
    await before.client.send(new PutCommand({ TableName: before.tableName, Item: { pk: PK.unshardedOperation, sk: operation.id, ...operation } }));
    await before.close();
    const plane = await start(cwd);
    expect(plane.output()).toContain('account items moved to their shards');
    expect(plane.output()).toContain('operation items moved to their shards');
    expect((await http(`${plane.url}/vendor/operations/${operation.id}`)).json).toMatchObject({ id: operation.id, account: 'prod', state: 'SUCCEEDED' });
    expect((await http(`${plane.url}/vendor/accounts/prod`)).json).toMatchObject({ name: 'prod', zoneId: 'agents_ns', config: { kubeconfigFile: '/k/prod.yml' } });
    expect((await http(`${plane.url}/vendor/accounts`)).json).toMatchObject({ total: 2, items: [{ name: 'old-one', zoneId: 'agents_ns' }, { name: 'prod' }] });
    expect(await stop(plane.child)).toBe(0);
  });

  it('uses the committed example when there is no vendor-driver.yml, and VENDOR_DATA_DIR for data', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    const dataDir = join(cwd, 'elsewhere');
    copyFileSync(join(import.meta.dirname, '../vendor-driver.example.yml'), join(cwd, 'vendor-driver.example.yml'));
    const plane = await start(cwd, { VENDOR_DATA_DIR: dataDir });
    expect(plane.output()).toContain('vendor-driver.example.yml');
    expect(plane.output()).toContain(dataDir);
    // The example's token is in the repository for anyone to read: the console line shows it, so that a
    // first run can sign in.
    await vi.waitFor(() => expect(plane.output()).toContain(`sign in with the example config's admin token ${EXAMPLE_ADMIN_TOKEN}`));
    // The README's quick start: the example's admin token, on loopback.
    expect((await http(`${plane.url}/vendor/accounts`, 'GET', undefined, EXAMPLE_ADMIN_TOKEN)).json.total).toBe(2);
    expect(await stop(plane.child)).toBe(0);
  });

  it('refuses a bad driver config with the key path and exits 1', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    writeFileSync(join(cwd, 'bad.yml'), 'kubernetes:\n  accounts:\n    - name: ok\n      kinds: 5\n');
    const { code, output } = await refused(cwd, { VENDOR_DRIVER_CONFIG: 'bad.yml' });
    expect(code).toBe(1);
    expect(output).toContain('kubernetes.accounts[0].kinds');
    expect(output).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('never runs the API without authentication, nor with the admin token in production mode or the example token off loopback', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    writeFileSync(join(cwd, 'none.yml'), 'kubernetes:\n  accounts: []\n');
    writeFileSync(join(cwd, 'admin.yml'), AUTH);
    writeFileSync(join(cwd, 'example.yml'), `api:\n  auth:\n    adminToken: ${EXAMPLE_ADMIN_TOKEN}\n`);
    const none = await refused(cwd, { VENDOR_DRIVER_CONFIG: 'none.yml' });
    expect(none.code).toBe(1);
    expect(none.output).toContain('api.auth: the API does not run without authentication');
    const production = await refused(cwd, { VENDOR_DRIVER_CONFIG: 'admin.yml', VENDOR_ENV: 'production' });
    expect(production.code).toBe(1);
    expect(production.output).toContain('api.auth.adminToken: the admin token is for local use only and is refused in production mode');
    expect(production.output).not.toContain(TOKEN);
    const exposed = await refused(cwd, { VENDOR_DRIVER_CONFIG: 'example.yml', VENDOR_API_HOST: '0.0.0.0' });
    expect(exposed.code).toBe(1);
    expect(exposed.output).toContain('the admin token of the example config is known to everyone');
  });

  it('warns at start about accounts whose permissions are not applied (docs/agent-config.md#permissions)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts:\n    - name: prod\n      permissions:\n        - READ: ["release team"]\n`);
    const plane = await start(cwd);
    expect(plane.output()).toMatch(/WARN account permissions are NOT applied.*account=prod.*kubernetes\.accounts\[0\]\.permissions/);
    expect((await http(`${plane.url}/vendor/accounts/prod`)).json).toMatchObject({ permissionsIgnored: true });
    expect(await stop(plane.child)).toBe(0);
  });

  it('answers over real HTTP with the security headers, the body limit and the configured CORS origins', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    const origin = 'https://console.example.com';
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}  cors:\n    allowOrigins: [${origin}]\nkubernetes:\n  accounts:\n    - name: prod\n`);
    const { child, url, output } = await start(cwd);
    expect(output()).toContain('browsers on these origins may call the API (CORS)');
    const res = await fetch(`${url}/vendor/accounts`, { headers: { authorization: `Bearer ${TOKEN}`, origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('strict-transport-security')).toBeNull();
    const preflight = await fetch(`${url}/vendor/accounts`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PATCH' } });
    expect(preflight.status).toBe(204);
    // A body over the limit sent in chunks, with no length announced.
    const chunk = new TextEncoder().encode(`[${'{"name":"prod"},'.repeat(4096)}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i <= DEFAULT_MAX_BODY_BYTES / chunk.length; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const big = await fetch(`${url}/vendor/accounts`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body, duplex: 'half' } as RequestInit);
    expect(big.status).toBe(413);
    expect(big.headers.get('content-type')).toBe('application/problem+json');
    expect(await stop(child)).toBe(0);
  });
});

describe('local control plane with an agent (KUBECONFIG=... npm start)', () => {
  const KUBE_TOKEN = 'local-cluster-token-0000000000001';
  let kube: TestApiServer;
  beforeAll(async () => {
    kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: 'developer' } } });
  });
  afterAll(() => kube.close());

  it('runs an agent too: POST and PATCH the local account and it is ACTIVE, held by that agent', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    const kubeconfig = kube.writeKubeconfig(join(cwd, 'kubeconfig'), { token: KUBE_TOKEN });
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts: []\n`);
    const plane = await start(cwd, { KUBECONFIG: kubeconfig });
    await vi.waitFor(() => expect(plane.output()).toMatch(/\[agent\] .*connected to the driver/), { timeout: 20_000 });
    expect(plane.output()).toContain('agent started for account "local"');
    // The local agent speaks for an identity of its own, not with a fleet-wide token.
    expect(plane.output()).toContain('agent stream accepted for identity npm-start-local-agent');
    expect(plane.output()).not.toContain('fleet-wide token');
    expect((await http(`${plane.url}/vendor/accounts/local`)).json).toMatchObject({ source: 'driver', config: { kubeconfigFile: kubeconfig } });

    expect((await http(`${plane.url}/vendor/accounts`, 'POST', [{ name: 'local' }])).status).toBe(200);
    expect((await http(`${plane.url}/vendor/accounts`, 'PATCH', [{ name: 'local', state: 'ACTIVE' }])).status).toBe(200);
    await vi.waitFor(
      async () =>
        expect((await http(`${plane.url}/vendor/accounts/local`)).json).toMatchObject({
          state: 'ACTIVE',
          agents: [{ agentId: 'local-agent', caching: true }],
          lastAssignmentMsg: `connected to ${kube.url} (Kubernetes v1.30.0)`,
        }),
      { timeout: 20_000, interval: 100 },
    );
    expect(kube.requests.log().some((r) => r.path === '/version' && r.user === 'developer')).toBe(true);

    // An operation goes from the API through the driver of the same process to the agent, and back.
    const submitted = await fetch(`${plane.url}/vendor/accounts/local/operations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'Idempotency-Key': 'npm-start-1' },
      body: JSON.stringify({ action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-npm-start', namespace: 'default' }, data: { a: '1' } }] }),
    });
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    const done = await http(`${plane.url}/vendor/operations/${id}?wait=20`);
    expect(done.json).toMatchObject({ state: 'SUCCEEDED', agentId: 'local-agent', outcomes: [{ result: 'created', code: 201 }] });
    expect(kube.requests.log().some((r) => r.verb === 'patch' && r.name === 'from-npm-start' && r.user === 'developer')).toBe(true);
    expect(await stop(plane.child)).toBe(0);
    expect(plane.output()).toContain('[agent] ');
    expect(plane.output()).toMatch(/agent stopped/);
  });

  it('starts the agent again when it crashes, and the local account is held again (docs/local.md)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'control-plane-'));
    const kubeconfig = kube.writeKubeconfig(join(cwd, 'kubeconfig'), { token: KUBE_TOKEN });
    writeFileSync(join(cwd, 'vendor-driver.yml'), `${AUTH}kubernetes:\n  accounts: []\n`);
    const plane = await start(cwd, { KUBECONFIG: kubeconfig });
    await vi.waitFor(() => expect(plane.output()).toMatch(/\[agent\] .*connected to the driver/), { timeout: 20_000 });
    expect((await http(`${plane.url}/vendor/accounts`, 'POST', [{ name: 'local' }])).status).toBe(200);
    expect((await http(`${plane.url}/vendor/accounts`, 'PATCH', [{ name: 'local', state: 'ACTIVE' }])).status).toBe(200);
    const held = async () =>
      expect((await http(`${plane.url}/vendor/accounts/local`)).json).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'local-agent' }] });
    await vi.waitFor(held, { timeout: 20_000, interval: 100 });

    const firstPid = Number(/agent started for account "local".* pid=(\d+)/.exec(plane.output())?.[1]);
    expect(firstPid).toBeGreaterThan(0);
    process.kill(firstPid, 'SIGKILL');
    await vi.waitFor(() => expect(plane.output()).toMatch(/the local agent exited; starting it again .*restartInMs=\d+/), { timeout: 10_000 });
    await vi.waitFor(() => expect(plane.output()).toMatch(/the local agent started again .*pid=\d+ restarts=1/), { timeout: 10_000 });
    const secondPid = Number(/the local agent started again .*pid=(\d+)/.exec(plane.output())?.[1]);
    expect(secondPid).not.toBe(firstPid);
    // The new agent connects and takes the account back: it does not stay without an agent.
    await vi.waitFor(() => expect(plane.output().split('the local agent started again')[1]).toMatch(/\[agent\] .*connected to the driver/), { timeout: 20_000 });
    await vi.waitFor(held, { timeout: 20_000, interval: 100 });
    expect(await stop(plane.child)).toBe(0);
    // Asked to stop, it is not started again.
    expect(plane.output().match(/the local agent started again/g)).toHaveLength(1);
  });
});
