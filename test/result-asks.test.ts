/**
 * Result asks end to end (docs/protocol.md#6b-wakes): the API and a driver replica share only the
 * table and the wake secret, as deployed; a request waiting for an operation asks the replica (HTTP
 * over TCP on the wake port) and reads the table once told. Real sockets, a real gRPC agent, dynalite.
 */
import type { Hono } from 'hono';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import type { ApiEnv } from '../functions/auth/caller.ts';
import { WakeSender } from '../functions/wake/sender.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import { liveSessions } from '../shared/table/agents/sessions.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { compress, createOperation, finishOperation } from '../shared/table/operations/operations.ts';
import { requestHash } from '../shared/operations/hash.ts';
import { RESULT_ANSWER_HEADER, resultAnswerBody, signResultAnswer } from '../shared/wake/result-answer.ts';
import { putAgentStaticAccounts } from '../shared/table/sources/agent-static.ts';
import { parseWakeAddress } from '../shared/wake/address.ts';
import { encodeResultAsk, RESULT_ASK_HEADER, RESULT_ASK_PATH } from '../shared/wake/result-ask.ts';
import { useAccountsWorld } from './support/accounts-world.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from './support/api.ts';
import { startWakeReplica } from './support/wake-replica.ts';
import { watchedTable } from './support/watched-table.ts';
import { TestIssuer, oidcConfig } from './support/oidc.ts';
import { getOperation, submitOperation } from './support/operations.ts';
import { interceptedTable, operationOf } from './support/intercepted-table.ts';
import { isOperationPartition } from '../shared/table/operations/keys.ts';

const world = useAccountsWorld();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  world.kube.faults.clear();
});
const SECRET = 'result-ask-secret-for-tests-0123456789ab';
const RARELY = 60_000;
const WAIT = { timeout: 20_000, interval: 20 };
/** Long enough for the waiting request to have asked the replica, and for a poll schedule to read several times. */
const SETTLE_MS = 400;
/** How long the test API server takes to answer the operation's apply: the wait spans a few poll periods. */
const SLOW_APPLY_MS = 1_500;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const CONFIG_MAP = (name: string) => ({ action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } }] });

/** Reads of operation items by the API, counted on its own client. */
class CountedTable {
  readonly table: TableRef;
  operationReads = 0;

  constructor(tableName: string, endpoint: string) {
    this.table = watchedTable(tableName, endpoint, (name, input) => {
      if (name === 'GetItemCommand' && isOperationPartition((input as { Key?: { pk?: unknown } }).Key?.pk)) this.operationReads++;
    });
  }
}

interface AskWorld {
  /** The API as deployed: wakes and result asks. */
  app: Hono<ApiEnv>;
  wakes: WakeSender;
  /** Stops the replica. */
  stop(): Promise<void>;
  counted: CountedTable;
  address: { host: string; port: number };
  /** The replica's count of result asks with this outcome (`vendor_driver_result_asks_total`). */
  asks(outcome: string): Promise<number>;
}

async function start(wake: Record<string, unknown> = {}): Promise<AskWorld> {
  await world.fresh([{ name: 'prod' }]);
  const driver = await startWakeReplica(world, { table: world.table, secret: SECRET, assignmentPollMs: 200, operationsPollMs: RARELY, wake });
  const counted = new CountedTable(world.table.tableName, world.tables.endpoint);
  const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: SECRET });
  const app = createApp({ table: counted.table, clock: systemClock, auth: adminTokenAuth(), wakes });
  // The replica stops at the world's reset too (startWakeReplica); its close may be called twice.
  const stop = () => driver.close(100);
  cleanups.push(async () => wakes.close());
  await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(async () => expect(await liveSessions(world.table, Date.now())).toHaveLength(1), WAIT);
  const [session] = await liveSessions(world.table, Date.now());
  const address = parseWakeAddress(session?.wake ?? '') ?? { host: '', port: 0 };
  await call(app, 'POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: world.kubeconfig('prod') }]);
  await call(app, 'PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
  await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
  const asks = async (outcome: string) => (await driver.metrics.resultAsks.get()).values.find((x) => x.labels.outcome === outcome)?.value ?? 0;
  return { app, wakes, stop, counted, address, asks };
}

async function call(app: Hono<ApiEnv>, method: string, path: string, body?: unknown): Promise<void> {
  const res = await app.request(path, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  expect(res.status).toBe(200);
}

/** An operation under way (its apply slowed or held by the test API server) and a GET `?wait` for it. */
async function waitingGet(w: AskWorld, name: string) {
  const stored = await submitOperation(w.app, 'prod', CONFIG_MAP(name));
  expect(stored.status).toBe(202);
  const id = stored.json.id as string;
  const asked = vi.spyOn(w.wakes.results, 'listen');
  const before = w.counted.operationReads;
  const started = Date.now();
  let answeredAt = Number.POSITIVE_INFINITY;
  const view = getOperation(w.app, id, 30).finally(() => (answeredAt = Date.now()));
  await vi.waitFor(() => expect(asked).toHaveBeenCalled(), WAIT);
  await settle();
  return {
    id,
    view,
    reads: () => w.counted.operationReads - before,
    /** What a wait told of the result may read: its first read, one a second as a fallback, and the one once told. */
    toldReads: () => 2 + Math.ceil((answeredAt - started) / 1000),
  };
}

/** POST `?wait`: the operation's view, answered once it finished. */
async function submitAndWait(app: Hono<ApiEnv>, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await app.request('/vendor/accounts/prod/operations?wait=30', {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** An operation of account prod stored QUEUED straight in the table: no wake, so no replica takes it. */
async function queuedInTable(name: string): Promise<string> {
  const request = CONFIG_MAP(name);
  const { record } = await createOperation(world.table, {
    account: 'prod',
    submittedBy: 'admin:test',
    idempotencyKey: randomUUID(),
    requestHash: requestHash('prod', request),
    request: compress(request),
    record: { action: 'deploy', objects: 1 },
    now: Date.now(),
  });
  return record.id;
}

/**
 * A replica of the test's making, the only one the API asks: it writes the operation's true finish to
 * the table, then answers the ask "finished" with what `forge` makes of it.
 */
async function forger(w: AskWorld, forge: (ask: string, truth: NonNullable<Awaited<ReturnType<typeof finishOperation>>>) => { body: string; signature?: string }): Promise<void> {
  const server: Server = createServer((req, res) => {
    const ask = String(req.headers[RESULT_ASK_HEADER]);
    const id = ask.split(' ')[1] as string;
    void finishOperation(world.table, id, { state: 'SUCCEEDED', message: 'the truth' }, Date.now()).then((truth) => {
      const { body, signature } = forge(ask, truth as NonNullable<typeof truth>);
      res.writeHead(200, { 'content-type': 'application/json', ...(signature === undefined ? {} : { [RESULT_ANSWER_HEADER]: signature }) }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  vi.spyOn(w.wakes.results, 'replicasOf').mockResolvedValue([`127.0.0.1:${(server.address() as AddressInfo).port}`]);
}

/** One raw ask to the replica: its status and body. */
function ask(address: { host: string; port: number }, header: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address.host, port: address.port, path: RESULT_ASK_PATH, headers: header === undefined ? {} : { [RESULT_ASK_HEADER]: header } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('result asks between the API and a driver replica', () => {
  it('a waiting GET hears of the result from the replica: no table poll while it waits', async () => {
    const w = await start();
    world.kube.faults.latency(SLOW_APPLY_MS, { resource: 'configmaps', name: 'pushed' });
    const waiting = await waitingGet(w, 'pushed');
    // Only the GET's own read so far: it waits on the replica, not on the table.
    expect(waiting.reads()).toBe(1);
    expect((await waiting.view).state).toBe('SUCCEEDED');
    expect(waiting.reads()).toBeLessThanOrEqual(waiting.toldReads());
  });

  it('a replica that takes no asks leaves the wait to the table: the caller still gets the result', async () => {
    const w = await start({ results: false });
    world.kube.faults.latency(SLOW_APPLY_MS, { resource: 'configmaps', name: 'polled' });
    const waiting = await waitingGet(w, 'polled');
    expect((await waiting.view).state).toBe('SUCCEEDED');
    // The ask was refused (nothing listens on TCP): the wait read the table on its tight schedule.
    expect(waiting.reads()).toBeGreaterThan(waiting.toldReads());
  });

  it('a replica gone while it holds the ask: the wait falls back to the table and sees a result written elsewhere', async () => {
    const w = await start();
    world.kube.faults.hang({ resource: 'configmaps', name: 'orphaned' });
    const waiting = await waitingGet(w, 'orphaned');
    expect(waiting.reads()).toBe(1);
    await w.stop();
    // Another replica records the result.
    expect(await finishOperation(world.table, waiting.id, { state: 'SUCCEEDED', message: 'recorded elsewhere' }, Date.now())).toBeDefined();
    const view = await waiting.view;
    expect(view.state).toBe('SUCCEEDED');
    expect(view.message).toBe('recorded elsewhere');
  });

  it('a POST ?wait is answered from the replica\'s answer: no read of the operation after it', async () => {
    const w = await start();
    const listen = w.wakes.results.listen.bind(w.wakes.results);
    let readsWhenAnswered: number | undefined;
    const listened = vi.spyOn(w.wakes.results, 'listen').mockImplementation(async (...args) => {
      const heard = await listen(...args);
      readsWhenAnswered = w.counted.operationReads;
      return heard;
    });
    const reply = await submitAndWait(w.app, CONFIG_MAP('answered'));
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ state: 'SUCCEEDED', attempts: 1, agentId: 'a1', outcomes: [{ kind: 'ConfigMap', name: 'answered', result: 'created' }] });
    expect(listened).toHaveBeenCalledTimes(1);
    expect(readsWhenAnswered).toBeDefined();
    expect(w.counted.operationReads).toBe(readsWhenAnswered);
    // The answer is the table's record, field for field.
    expect(reply.json).toEqual(await getOperation(w.app, reply.json.id as string));
  });

  it('a POST ?wait asks the replica while its operation is being stored, not after; a refused POST asks nobody', async () => {
    const w = await start();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let storing!: () => void;
    const reached = new Promise<void>((r) => (storing = r));
    const table = interceptedTable(w.counted.table, async (command, send) => {
      if (operationOf(command) === 'Put' && isOperationPartition(command.input.Item?.pk)) {
        storing();
        await held;
      }
      return send(command);
    });
    const app = createApp({ table, clock: systemClock, auth: adminTokenAuth(), wakes: w.wakes });
    const asked = vi.spyOn(w.wakes.results, 'listen');
    const refused = await submitAndWait(app, { action: 'deploy', manifests: [{ kind: 'ConfigMap' }] });
    expect(refused.status).toBe(400);
    expect(asked).not.toHaveBeenCalled();
    const reply = submitAndWait(app, CONFIG_MAP('asked-early'));
    await reached;
    // The operation's put is held: the ask is out already.
    await vi.waitFor(() => expect(asked).toHaveBeenCalledTimes(1), WAIT);
    release();
    expect((await reply).json).toMatchObject({ state: 'SUCCEEDED', agentId: 'a1' });
    expect(asked).toHaveBeenCalledTimes(1);
  });

  it('an answer that is unsigned, altered, replayed or of another operation is never believed: the wait reads the table', async () => {
    const w = await start();
    const forgeries: Record<string, (ask: string, truth: Parameters<Parameters<typeof forger>[1]>[1]) => { body: string; signature?: string }> = {
      unsigned: (_ask, truth) => ({ body: resultAnswerBody({ ...truth, message: 'forged' }) as string }),
      altered: (ask, truth) => ({ body: resultAnswerBody({ ...truth, message: 'forged' }) as string, signature: signResultAnswer(SECRET, ask, resultAnswerBody(truth) as string) }),
      replayed: (ask, truth) => {
        const body = resultAnswerBody({ ...truth, message: 'forged' }) as string;
        // Signed for an earlier ask of the same operation (another nonce and time).
        const earlier = encodeResultAsk(SECRET, truth.id, 20_000, Date.now() - 1_000);
        expect(earlier).not.toBe(ask);
        return { body, signature: signResultAnswer(SECRET, earlier, body) };
      },
      'another operation': (ask, truth) => {
        const body = resultAnswerBody({ ...truth, id: 'f'.repeat(32), message: 'forged' }) as string;
        return { body, signature: signResultAnswer(SECRET, ask, body) };
      },
      'another secret': (ask, truth) => {
        const body = resultAnswerBody({ ...truth, message: 'forged' }) as string;
        return { body, signature: signResultAnswer('another-secret-0123456789abcdefghijkl', ask, body) };
      },
    };
    for (const [name, forge] of Object.entries(forgeries)) {
      vi.restoreAllMocks();
      await forger(w, forge);
      const id = await queuedInTable(`forged-${name.replace(' ', '-')}`);
      const before = w.counted.operationReads;
      const view = await getOperation(w.app, id, 10);
      expect({ name, state: view.state, message: view.message }).toEqual({ name, state: 'SUCCEEDED', message: 'the truth' });
      // Its first read, and the one after the answer.
      expect(w.counted.operationReads - before).toBeGreaterThanOrEqual(2);
    }
    // The same replica answering honestly is believed: no read after its answer.
    vi.restoreAllMocks();
    await forger(w, (ask, truth) => {
      const body = resultAnswerBody(truth) as string;
      return { body, signature: signResultAnswer(SECRET, ask, body) };
    });
    const id = await queuedInTable('honest');
    const before = w.counted.operationReads;
    expect(await getOperation(w.app, id, 10)).toMatchObject({ state: 'SUCCEEDED', message: 'the truth' });
    expect(w.counted.operationReads - before).toBe(1);
  });

  it('refuses a forged, replayed, stale or malformed ask at once, the same way for any operation', async () => {
    const w = await start();
    const reply = await submitOperation(w.app, 'prod', CONFIG_MAP('asked'));
    const id = reply.json.id as string;
    expect((await getOperation(w.app, id, 30)).state).toBe('SUCCEEDED');
    const now = Date.now();
    const valid = encodeResultAsk(SECRET, id, 1_000, now);
    // Finished here: the answer carries the operation (signed for this ask; the API checks that).
    const answered = await ask(w.address, valid);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toMatchObject({ id, account: 'prod', state: 'SUCCEEDED' });
    const refused = { status: 403, body: '' };
    // The very same ask again: replayed.
    expect(await ask(w.address, valid)).toEqual(refused);
    // Another secret: forged.
    expect(await ask(w.address, encodeResultAsk('another-secret-0123456789abcdefghijkl', id, 1_000, now))).toEqual(refused);
    // A valid ask with its id changed: the signature no longer matches.
    expect(await ask(w.address, valid.replace(id, `${id.slice(0, -1)}${id.endsWith('a') ? 'b' : 'a'}`))).toEqual(refused);
    // Made longer ago, or further ahead, than wake.maxAgeMs: stale.
    expect(await ask(w.address, encodeResultAsk(SECRET, id, 1_000, now - 31_000))).toEqual(refused);
    expect(await ask(w.address, encodeResultAsk(SECRET, id, 1_000, now + 31_000))).toEqual(refused);
    expect(await ask(w.address, 'vr1 nonsense')).toEqual(refused);
    expect(await ask(w.address, undefined)).toEqual(refused);
    // An operation that never finished here is refused in the same way when forged.
    expect(await ask(w.address, encodeResultAsk('another-secret-0123456789abcdefghijkl', 'no-such-operation', 1_000, now))).toEqual(refused);
    // A valid ask for one that has not finished here is held, then answered "not yet".
    expect(await ask(w.address, encodeResultAsk(SECRET, 'no-such-operation', 200, Date.now()))).toEqual({ status: 204, body: '' });
    // Every refusal is counted by its reason, for the operator's alerts.
    expect({ replayed: await w.asks('replayed'), forged: await w.asks('forged'), stale: await w.asks('stale'), malformed: await w.asks('malformed') }).toEqual({ replayed: 1, forged: 3, stale: 2, malformed: 2 });
    expect(await w.asks('finished')).toBeGreaterThanOrEqual(1);
    expect(await w.asks('not_yet')).toBeGreaterThanOrEqual(1);
  });
});

describe('result asks and who may read an operation', () => {
  let issuer: TestIssuer;
  let kid: string;
  beforeAll(async () => {
    issuer = await TestIssuer.start();
    kid = await issuer.addKey('ES256');
  });
  afterAll(() => issuer.close());

  it('the API authorizes the caller before it asks any replica: a stranger learns nothing', async () => {
    await world.fresh([]);
    await putAgentStaticAccounts(world.table, 'agent-1', 'agents_ns', [{ name: 'guarded', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] }], Date.now());
    const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: SECRET });
    cleanups.push(() => wakes.close());
    const app = createApp({ table: world.table, clock: systemClock, auth: createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: [] }, { production: false, clock: systemClock }), wakes });
    const as = async (group: string) => ({ authorization: `Bearer ${await issuer.token({ sub: `user-${group}`, groups: [group] }, { kid })}` });
    const posted = await app.request('/vendor/accounts/guarded/operations', {
      method: 'POST',
      headers: { ...(await as('ops')), 'content-type': 'application/json', 'Idempotency-Key': 'k1' },
      body: JSON.stringify(CONFIG_MAP('guarded')),
    });
    expect(posted.status).toBe(202);
    const id = ((await posted.json()) as { id: string }).id;
    const asked = vi.spyOn(wakes.results, 'replicasOf');
    const stranger = await app.request(`/vendor/operations/${id}?wait=1`, { headers: await as('someone-else') });
    expect(stranger.status).toBe(404);
    expect(asked).not.toHaveBeenCalled();
    const reader = await app.request(`/vendor/operations/${id}?wait=1`, { headers: await as('dev') });
    expect(reader.status).toBe(200);
    expect(asked).toHaveBeenCalledTimes(1);
  });
});
