import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { everyOperationItem, everyOperationRequestItem, everyQueueEntryItem } from '../../test/support/sharded-items.ts';
import { OperationEvents, type QueuedOperation } from '../../shared/operations/events.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { claimOperation, finishOperation, getOperation } from '../../shared/table/operations/operations.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { adminTokenAuth, TEST_ADMIN_TOKEN } from '../../test/support/api.ts';
import { TestIssuer, oidcConfig } from '../../test/support/oidc.ts';
import type { ApiAuth } from '../auth/authenticator.ts';
import { createApiAuth } from '../auth/authenticator.ts';
import { createApp } from '../app.ts';

const tables = useTestTables();

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

async function fixture(options: { maxOperationBodyBytes?: number; auth?: ApiAuth } = {}) {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  const events = new OperationEvents();
  const queued: QueuedOperation[] = [];
  events.onQueued((op) => queued.push(op));
  await putAgentStaticAccounts(table, 'agent-1', 'agents_ns', [
    { name: 'prod' },
    { name: 'locked', namespaces: ['shop'], onlyNamespacedResources: true, customResourceDefinitions: [{ kind: 'Rollout.argoproj.io' }] },
    { name: 'guarded', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] },
  ], clock.now());
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, [{ name: 'native' }], clock.now());
  const app = createApp({ table, clock, operationEvents: events, auth: adminTokenAuth(), ...options });
  let token = TEST_ADMIN_TOKEN;
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const res = await app.request(path, { method, headers: { authorization: `Bearer ${token}`, ...headers }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  return {
    table,
    clock,
    events,
    queued,
    post: (account: string, body: unknown, key: string | null = 'key-1', query = '') => send('POST', `/vendor/accounts/${account}/operations${query}`, body, key === null ? {} : { 'Idempotency-Key': key }),
    get: (id: string, query = '') => send('GET', `/vendor/operations/${id}${query}`),
    list: (account: string) => send('GET', `/vendor/accounts/${account}/operations`),
    /** Calls as the holder of `bearer` from now on. */
    as(bearer: string) {
      token = bearer;
    },
  };
}

/** Moves a fixture's clock on while a request sleeps on it, so a wait of the API runs out. */
class ManualClockWait {
  readonly #clock: ManualClock;
  constructor(f: { clock: ManualClock }) {
    this.#clock = f.clock;
  }
  async through(ms: number): Promise<void> {
    for (let passed = 0; passed < ms; passed += 100) {
      while (this.#clock.pendingSleeps === 0) await new Promise((r) => setImmediate(r));
      await this.#clock.advance(100);
    }
  }
}

/** Operations, request items (only for requests too large to keep inline) and queue entries, of every shard. */
async function stored(t: TableRef): Promise<number[]> {
  return (await Promise.all([everyOperationItem(t), everyOperationRequestItem(t), everyQueueEntryItem(t)])).map((items) => items.length);
}

const deployment = (name: string, namespace = 'shop') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
});

describe('POST /vendor/accounts/{accountId}/operations', () => {
  it('stores a queued operation before answering 202 with its location, and wakes a local driver', async () => {
    const f = await fixture();
    const res = await f.post('prod', { action: 'deploy', manifests: [deployment('web')] });
    expect(res.status).toBe(202);
    const id = res.json.id as string;
    expect(res.headers.get('location')).toBe(`/vendor/operations/${id}`);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.json).toMatchObject({ account: 'prod', action: 'deploy', state: 'QUEUED', objects: 1, attempts: 0, outcomes: [], idempotencyKey: 'key-1', createdAt: '2023-11-14T22:13:20.000Z' });
    expect(await stored(f.table)).toEqual([1, 0, 1]);
    expect(f.queued.map((q) => [q.record.id, q.request.action])).toEqual([[id, 'deploy']]);
    expect((await f.get(id)).json).toEqual(res.json);
  });

  it('answers a retried request with the same operation, stored once, also for YAML of the same manifests and for concurrent retries', async () => {
    const f = await fixture();
    const first = await f.post('prod', { action: 'deploy', manifests: [deployment('web')], namespace: 'shop' });
    const yaml = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec: {containers: [{name: app, image: nginx}]}\n    metadata: {labels: {app: web}}\n  selector: {matchLabels: {app: web}}\n';
    const again = await f.post('prod', { namespace: 'shop', manifests: yaml, action: 'deploy' });
    expect(again.status).toBe(202);
    expect(again.json.id).toBe(first.json.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const racing = await Promise.all(Array.from({ length: 8 }, () => f.post('prod', { action: 'scale', targets: [deployment('web').metadata].map((m) => ({ apiVersion: 'apps/v1', kind: 'Deployment', ...m })), replicas: 2 }, 'key-2')));
    expect(racing.every((r) => r.status === 202)).toBe(true);
    expect(new Set(racing.map((r) => r.json.id)).size).toBe(1);
    expect(await stored(f.table)).toEqual([2, 0, 2]);
    expect(f.queued).toHaveLength(2);
  });

  it('refuses the same key with another request (409, naming the operation) and stores nothing new', async () => {
    const f = await fixture();
    const first = await f.post('prod', { action: 'deploy', manifests: [deployment('web')] });
    const res = await f.post('prod', { action: 'deploy', manifests: [deployment('api')] });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ code: 'conflict', operationId: first.json.id });
    expect(res.json.detail).toContain('Idempotency-Key "key-1" was already used for a different request');
    expect(await stored(f.table)).toEqual([1, 0, 1]);
  });

  it('with wait, answers the finished operation (200), or the open one once the wait is over (202)', async () => {
    const f = await fixture();
    const body = { action: 'rolloutRestart', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }] };
    // The local driver gets the operations of prod and finishes them.
    f.events.onQueued(({ record }) => {
      if (record.account === 'prod') void finishOperation(f.table, record.id, { state: 'SUCCEEDED', outcomes: [] }, f.clock.now()).then((done) => f.events.finished(done!));
    });
    const done = await f.post('prod', body, 'waited', '?wait=30');
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ state: 'SUCCEEDED', idempotencyKey: 'waited' });
    expect(done.headers.get('location')).toBe(`/vendor/operations/${String(done.json.id)}`);
    // Sent again: the same finished operation, at once.
    const replay = await f.post('prod', body, 'waited', '?wait=30');
    expect([replay.status, replay.json.id, replay.headers.get('idempotent-replayed')]).toEqual([200, done.json.id, 'true']);
    // Nothing finishes it: 202 once the wait is over.
    const open = new ManualClockWait(f);
    const pending = f.post('locked', { action: 'deploy', manifests: [deployment('web')] }, 'open', '?wait=1');
    await open.through(1000);
    const res = await pending;
    expect([res.status, res.json.state]).toEqual([202, 'QUEUED']);
  });

  it('refuses a bad wait or an unknown query parameter with 400, storing nothing', async () => {
    const f = await fixture();
    const body = { action: 'deploy', manifests: [deployment('web')] };
    for (const query of ['?wait=0', '?wait=61', '?wait=soon', '?wiat=5']) expect((await f.post('prod', body, 'key-1', query)).status).toBe(400);
    expect(await stored(f.table)).toEqual([0, 0, 0]);
  });

  it('requires an Idempotency-Key of visible ASCII', async () => {
    const f = await fixture();
    const none = await f.post('prod', { action: 'deploy', manifests: [deployment('web')] }, null);
    expect(none.status).toBe(400);
    expect(none.json.errors).toEqual([{ path: 'Idempotency-Key', message: 'is required' }]);
    expect((await f.post('prod', { action: 'deploy', manifests: [deployment('web')] }, 'x'.repeat(256))).status).toBe(400);
    expect((await f.post('prod', { action: 'deploy', manifests: [deployment('web')] }, '"quoted"')).status).toBe(202);
    expect(await stored(f.table)).toEqual([1, 0, 1]);
  });

  it('answers bad manifests with 400 naming each one, and stores nothing', async () => {
    const f = await fixture();
    const bad = await f.post('prod', { action: 'deploy', manifests: [deployment('ok'), { kind: 'Service', metadata: { name: 's' } }, 42] });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_input');
    expect(bad.json.errors).toEqual([
      { path: 'manifests[1].apiVersion', message: 'is required' },
      { path: 'manifests[2]', message: 'must be an object (a Kubernetes manifest)' },
    ]);
    const yaml = await f.post('prod', { action: 'deploy', manifests: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n' });
    expect(yaml.status).toBe(400);
    expect((yaml.json.errors as { path: string; message: string }[])[0]?.message).toMatch(/^YAML document 1 is not valid YAML/);
    expect((await f.post('prod', { action: 'launch' })).status).toBe(400);
    expect((await f.post('prod', '{"action": "deploy",')).status).toBe(400);
    expect((await f.post('prod', '')).status).toBe(400);
    expect(await stored(f.table)).toEqual([0, 0, 0]);
  });

  it("refuses what the account's settings forbid, per manifest, and stores nothing", async () => {
    const f = await fixture();
    const res = await f.post('locked', {
      action: 'deploy',
      manifests: [
        deployment('web', 'shop'),
        deployment('api', 'payments'),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'payments' } },
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' } },
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'r', namespace: 'shop' } },
      ],
    });
    expect(res.status).toBe(400);
    expect((res.json.errors as { path: string }[]).map((e) => e.path)).toEqual(['manifests[1]', 'manifests[2]', 'manifests[3]']);
    expect(res.json.detail).toContain('not one of the account\'s namespaces (shop)');
    expect(res.json.detail).toContain('Widget.example.com is a custom resource not listed');
    const scale = await f.post('locked', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'kube-system', name: 'dns' }], replicas: 0 });
    expect(scale.status).toBe(400);
    expect(scale.json.errors).toEqual([{ path: 'targets[0]', message: 'namespace "kube-system" is not one of the account\'s namespaces (shop)' }]);
    expect(await stored(f.table)).toEqual([0, 0, 0]);
    expect((await f.post('locked', { action: 'deploy', manifests: [deployment('web', 'elsewhere')], namespace: 'shop' })).status).toBe(202);
  });

  it('decides on a fresh read of the account what a kept one would refuse: a namespace allowed a moment ago takes operations at once', async () => {
    const f = await fixture();
    const body = { action: 'deploy', manifests: [deployment('web', 'payments')] };
    expect((await f.post('locked', body)).status).toBe(400);
    await putAgentStaticAccounts(f.table, 'agent-1', 'agents_ns', [
      { name: 'prod' },
      { name: 'locked', namespaces: ['shop', 'payments'], onlyNamespacedResources: true },
      { name: 'guarded', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] },
    ], f.clock.now());
    expect((await f.post('locked', body)).status).toBe(202);
  });

  it('answers oversize bodies and requests too large to store with 413', async () => {
    const small = await fixture({ maxOperationBodyBytes: 2048 });
    const big = await small.post('prod', { action: 'deploy', manifests: [{ ...deployment('web'), data: 'x'.repeat(4096) }] });
    expect(big.status).toBe(413);
    const f = await fixture();
    // Random bytes do not compress: 500 KB of them cannot fit the stored request.
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'blob', namespace: 'shop' }, binaryData: { blob: randomBytes(500 * 1024).toString('base64') } };
    const res = await f.post('prod', { action: 'deploy', manifests: [configMap] });
    expect(res.status).toBe(413);
    expect(res.json.detail).toContain('too large to store');
    expect(await stored(f.table)).toEqual([0, 0, 0]);
    expect(await stored(small.table)).toEqual([0, 0, 0]);
  });

  it('answers 404 for an unknown account and 409 for a driver account not served by agents', async () => {
    const f = await fixture();
    expect((await f.post('ghost', { action: 'deploy', manifests: [deployment('web')] })).status).toBe(404);
    const native = await f.post('native', { action: 'deploy', manifests: [deployment('web')] });
    expect(native.status).toBe(409);
    expect(native.json.detail).toContain('account "native" is not served by agents');
    expect(await stored(f.table)).toEqual([0, 0, 0]);
  });
});

describe('GET /vendor/operations/{operationId}', () => {
  it('answers 404 for ids that are not there or cannot be ids', async () => {
    const f = await fixture();
    expect((await f.get('0000000001000-0000000000000000')).status).toBe(404);
    expect((await f.get('..%2Fetc')).status).toBe(404);
    expect((await f.get('0000000001000-0000000000000000', '?wait=0')).status).toBe(400);
  });

  it('serves the outcome, the agent and its timing once finished', async () => {
    const f = await fixture();
    const id = (await f.post('prod', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 })).json.id as string;
    await claimOperation(f.table, id, 0, { agentId: 'agent-1', sessionId: 's', replicaId: 'r', at: f.clock.now() + 10 }, f.clock.now() + 10);
    const running = await f.get(id);
    expect(running.json).toMatchObject({ state: 'RUNNING', attempts: 1, agentId: 'agent-1', dispatchedAt: '2023-11-14T22:13:20.010Z' });
    await finishOperation(f.table, id, {
      state: 'FAILED',
      message: '1 of 1 objects failed',
      report: { agentId: 'agent-1', attempt: 1, startedAt: f.clock.now() + 20, finishedAt: f.clock.now() + 30, budgetWaitMs: 0 },
      outcomes: [{ index: 0, apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', result: 'failed', code: 404, reason: 'NotFound', message: 'deployments.apps "web" not found' }],
    }, f.clock.now() + 40);
    expect((await f.get(id)).json).toMatchObject({
      state: 'FAILED',
      message: '1 of 1 objects failed',
      finishedAt: '2023-11-14T22:13:20.040Z',
      agentStartedAt: '2023-11-14T22:13:20.020Z',
      budgetWaitMs: 0,
      outcomes: [{ result: 'failed', code: 404, reason: 'NotFound', message: 'deployments.apps "web" not found' }],
    });
    // Failed for its object: the outcome says why, and there is no code of the operation's own.
    expect((await f.get(id)).json).not.toHaveProperty('errorCode');
  });

  it('serves the error code of an operation that failed as a whole, by id and in its account\'s list', async () => {
    const f = await fixture();
    const id = (await f.post('prod', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 })).json.id as string;
    const message = 'invalid_input: the operation is invalid: scale.replicas: must be at most 1000000';
    await finishOperation(f.table, id, { state: 'FAILED', message, errorCode: 'invalid_input', outcomes: [] }, f.clock.now() + 40);
    expect((await f.get(id)).json).toMatchObject({ id, state: 'FAILED', errorCode: 'invalid_input', message });
    const listed = (await f.list('prod')).json as { items: Record<string, unknown>[] };
    expect(listed.items.find((op) => op.id === id)).toMatchObject({ state: 'FAILED', errorCode: 'invalid_input' });
  });

  it('with wait, answers when a driver in the same process finishes the operation', async () => {
    const f = await fixture();
    const id = (await f.post('prod', { action: 'rolloutRestart', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }] })).json.id as string;
    const waiting = f.get(id, '?wait=30');
    const done = await finishOperation(f.table, id, { state: 'SUCCEEDED', outcomes: [] }, f.clock.now());
    f.events.finished(done!);
    expect((await waiting).json).toMatchObject({ id, state: 'SUCCEEDED' });
  });

  it('with wait, answers an operation handed out in this process from the news of its result, without reading the table', async () => {
    const f = await fixture();
    const id = (await f.post('prod', { action: 'rolloutRestart', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }] })).json.id as string;
    f.events.handedOut((await getOperation(f.table, id))!);
    const before = tables.meter.roundTrips;
    const waiting = f.get(id, '?wait=30');
    while (f.clock.pendingSleeps === 0) await new Promise((r) => setImmediate(r));
    expect(tables.meter.roundTrips).toBe(before);
    const done = await finishOperation(f.table, id, { state: 'SUCCEEDED', outcomes: [] }, f.clock.now());
    f.events.finished(done!);
    expect((await waiting).json).toMatchObject({ id, state: 'SUCCEEDED' });
    expect(tables.meter.roundTrips - before).toBe(1);
    // Finished: a later GET reads the table.
    expect((await f.get(id, '?wait=30')).json).toMatchObject({ id, state: 'SUCCEEDED' });
    expect(tables.meter.roundTrips - before).toBe(2);
  });

  it('with wait and no driver in the process, reads the table until it finishes or the wait is over', async () => {
    const table = await tables.fresh();
    const clock = new ManualClock(1_700_000_000_000);
    await putAgentStaticAccounts(table, 'agent-1', 'agents_ns', [{ name: 'prod' }], clock.now());
    const app = createApp({ table, clock, auth: adminTokenAuth() });
    const authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
    const post = await app.request('/vendor/accounts/prod/operations', {
      method: 'POST',
      headers: { 'Idempotency-Key': 'k', authorization },
      body: JSON.stringify({ action: 'rolloutRestart', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }] }),
    });
    const id = ((await post.json()) as { id: string }).id;
    const expired = Promise.resolve(app.request(`/vendor/operations/${id}?wait=1`, { headers: { authorization } })).then((r) => r.json() as Promise<{ state: string }>);
    while (clock.pendingSleeps === 0) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 12; i++) await clock.advance(100);
    expect((await expired).state).toBe('QUEUED');
    const finished = Promise.resolve(app.request(`/vendor/operations/${id}?wait=10`, { headers: { authorization } })).then((r) => r.json() as Promise<{ state: string }>);
    await finishOperation(table, id, { state: 'SUCCEEDED' }, clock.now());
    while (clock.pendingSleeps === 0) await new Promise((r) => setImmediate(r));
    await clock.advance(25);
    expect((await finished).state).toBe('SUCCEEDED');
  });
});

describe('who may submit and read operations (docs/api.md#authorization)', () => {
  let issuer: TestIssuer;
  let kid: string;
  beforeAll(async () => {
    issuer = await TestIssuer.start();
    kid = await issuer.addKey('ES256');
  });
  afterAll(() => issuer.close());

  it("needs one of the account's WRITE roles to submit, and READ to read; to others the operation does not exist", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const f = await fixture({ auth: createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: [] }, { production: false, clock }) });
    issuer.now = () => Math.floor(f.clock.now() / 1000);
    const as = (...groups: string[]) => issuer.token({ sub: `user-${groups.join('-')}`, groups }, { kid });
    const body = { action: 'deploy', manifests: [deployment('web')] };
    f.as(await as('dev'));
    const refused = await f.post('guarded', body);
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toBe('not allowed to write to account "guarded"');
    expect(await stored(f.table)).toEqual([0, 0, 0]);
    f.as(await as('ops'));
    const accepted = await f.post('guarded', body);
    expect(accepted.status).toBe(202);
    f.as(await as('dev'));
    expect((await f.get(accepted.json.id as string)).status).toBe(200);
    f.as(await as('someone-else'));
    expect((await f.get(accepted.json.id as string)).status).toBe(404);
    f.as('not-a-token');
    expect((await f.get(accepted.json.id as string)).status).toBe(401);
    expect((await f.post('guarded', body, 'key-9')).status).toBe(401);
  });

  it("keeps each caller's Idempotency-Keys its own: another caller's same key on the same account is another operation", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const f = await fixture({ auth: createApiAuth({ oidc: oidcConfig(issuer), adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: false, clock }) });
    issuer.now = () => Math.floor(f.clock.now() / 1000);
    const alice = await issuer.token({ sub: 'alice', groups: ['ops'] }, { kid });
    const mallory = await issuer.token({ sub: 'mallory', groups: ['ops'] }, { kid });
    // Mallory takes the key Alice is known to use next, with a request of her own...
    f.as(mallory);
    const squat = await f.post('guarded', { action: 'deploy', manifests: [deployment('squat')] }, 'release-42');
    expect(squat.status).toBe(202);
    // ...yet Alice's request with it is stored as hers (not a 409, not a replay of Mallory's).
    f.as(alice);
    const own = await f.post('guarded', { action: 'deploy', manifests: [deployment('web')] }, 'release-42');
    expect(own.status).toBe(202);
    expect(own.headers.get('idempotent-replayed')).toBeNull();
    expect(own.json.id).not.toBe(squat.json.id);
    // The same request with the same key does not replay another caller's operation either.
    const same = await f.post('guarded', { action: 'deploy', manifests: [deployment('squat')] }, 'release-42');
    expect([same.status, same.json.id]).toEqual([409, undefined]);
    // The admin token, and an OIDC subject named like it, are two callers as well.
    f.as(TEST_ADMIN_TOKEN);
    const admin = await f.post('guarded', { action: 'deploy', manifests: [deployment('squat')] }, 'release-42');
    f.as(await issuer.token({ sub: 'admin-token', groups: ['ops'] }, { kid }));
    const lookalike = await f.post('guarded', { action: 'deploy', manifests: [deployment('squat')] }, 'release-42');
    expect([admin.status, lookalike.status]).toEqual([202, 202]);
    expect(new Set([squat.json.id, own.json.id, admin.json.id, lookalike.json.id]).size).toBe(4);
    // Each caller's retry replays its own.
    f.as(mallory);
    const retry = await f.post('guarded', { action: 'deploy', manifests: [deployment('squat')] }, 'release-42');
    expect([retry.status, retry.json.id, retry.headers.get('idempotent-replayed')]).toEqual([202, squat.json.id, 'true']);
    expect(await stored(f.table)).toEqual([4, 0, 4]);
  });
});
