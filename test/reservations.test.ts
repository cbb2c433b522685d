/**
 * Reservations end to end (docs/protocol.md#reservations): the API and a driver replica share only the
 * table and the wake secret, as deployed; the API asks the replica (HTTP on the wake port) to set an
 * agent aside, stores the operation handed out to it, and tells it `stored` (UDP), so no claim is
 * written. The replica polls rarely here unless a test says otherwise. Real sockets, a real gRPC
 * agent, dynalite.
 */
import type { Hono } from 'hono';
import { createSocket } from 'node:dgram';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Driver } from '../driver/server.ts';
import { createApp } from '../functions/app.ts';
import type { ApiEnv } from '../functions/auth/caller.ts';
import { WakeSender } from '../functions/wake/sender.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import type { Dispatch } from '../shared/operations/model.ts';
import { liveSessions } from '../shared/table/agents/sessions.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { createOperation, getOperation, operationIdOf } from '../shared/table/operations/operations.ts';
import { parseWakeAddress } from '../shared/wake/address.ts';
import { encodeWake } from '../shared/wake/message.ts';
import { encodeReserveAsk, RESERVE_ANSWER_HEADER, RESERVE_ASK_HEADER, RESERVE_ASK_PATH, signReserveAnswer, type ReservedOperation } from '../shared/wake/reserve-ask.ts';
import { encodeReservationVerdict, type ReservationVerdictKind } from '../shared/wake/reservation-verdict.ts';
import { useAccountsWorld } from './support/accounts-world.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from './support/api.ts';
import { startWakeReplica } from './support/wake-replica.ts';
import { watchedTable } from './support/watched-table.ts';
import { refusingOnce } from './support/intercepted-table.ts';
import { submitOperation } from './support/operations.ts';
import { reservedOperation } from './support/reserved-operation.ts';
import { isOperationPartition } from '../shared/table/operations/keys.ts';

const world = useAccountsWorld();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  world.kube.faults.clear();
});
const SECRET = 'reservation-secret-for-tests-0123456789ab';
const ROGUE = 'a-secret-the-replica-does-not-know-012345';
const RARELY = 60_000;
const WAIT = { timeout: 20_000, interval: 20 };
/** Long enough for a datagram or a pass set off to have done what it does. */
const SETTLE_MS = 300;
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const CONFIG_MAP = (name: string) => ({ action: 'deploy' as const, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } }] });

/** The replica's table, counting its updates of operation items (claims, finishes, ends of a hand-out). */
function countedTable(): { table: TableRef; updates: number } {
  const counted = { table: world.table, updates: 0 };
  counted.table = watchedTable(world.table.tableName, world.tables.endpoint, (name, input) => {
    if ((name === 'UpdateItemCommand' || name === 'UpdateCommand') && isOperationPartition((input.Key as { pk?: unknown } | undefined)?.pk)) counted.updates++;
  });
  return counted;
}

interface ReserveWorld {
  app: Hono<ApiEnv>;
  wakes: WakeSender;
  driver: Driver;
  counted: { table: TableRef; updates: number };
  address: { host: string; port: number };
  agent: Awaited<ReturnType<typeof world.agent>>;
  /** `vendor_driver_reservations_total` with this outcome. */
  reservations(outcome: string): Promise<number>;
  wakes_(outcome: string): Promise<number>;
  handedOut(): Promise<number>;
}

async function start(options: { pollMs?: number; apiTable?: (table: TableRef) => TableRef } = {}): Promise<ReserveWorld> {
  await world.fresh([{ name: 'prod' }]);
  const counted = countedTable();
  const pollMs = options.pollMs ?? RARELY;
  const driver = await startWakeReplica(world, { table: counted.table, secret: SECRET, assignmentPollMs: 200, operationsPollMs: pollMs });
  // The replica's answer is waited for as long as a loaded machine may take to give it: these tests are
  // about what a reservation does, not about the 50 ms after which the API stores an operation queued.
  const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: SECRET, reserveWaitMs: 10_000 });
  // No operation events: the API and the replica share nothing but the table, as when deployed.
  const app = createApp({ table: options.apiTable?.(world.table) ?? world.table, clock: systemClock, auth: adminTokenAuth(), wakes });
  cleanups.push(() => wakes.close());
  const agent = await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(async () => expect(await liveSessions(world.table, Date.now())).toHaveLength(1), WAIT);
  const [session] = await liveSessions(world.table, Date.now());
  const address = parseWakeAddress(session?.wake ?? '') ?? { host: '', port: 0 };
  for (const [method, body] of [
    ['POST', [{ name: 'prod', kubeconfigFile: world.kubeconfig('prod') }]],
    ['PATCH', [{ name: 'prod', state: 'ACTIVE' }]],
  ] as const) {
    const res = await app.request('/vendor/accounts', { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
  }
  await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
  await settle();
  const count = async (metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> }, outcome: string) =>
    (await metric.get()).values.find((x) => x.labels.outcome === outcome)?.value ?? 0;
  return {
    app,
    wakes,
    driver,
    counted,
    address,
    agent,
    reservations: (outcome) => count(driver.metrics.reservations, outcome),
    wakes_: (outcome) => count(driver.metrics.wakes, outcome),
    handedOut: async () => (await driver.metrics.operationsHandedOut.get()).values[0]?.value ?? 0,
  };
}

/** An operation of account prod as the API describes it in an ask, with its id. */
const described = (name: string) => reservedOperation(name);

/** Stores the operation as the API does: handed out to `dispatch` when given, else queued. */
async function store(operation: ReservedOperation, dispatch?: Dispatch): Promise<string> {
  const { record, created } = await createOperation(world.table, { ...operation, request: Buffer.from(operation.request, 'base64'), dispatch });
  expect(created).toBe(true);
  return record.id;
}

/** One raw ask to the replica: its status, body and answer signature. */
function rawAsk(address: { host: string; port: number }, header: string, body: string): Promise<{ status: number; body: string; signature: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address.host, port: address.port, path: RESERVE_ASK_PATH, method: 'POST', headers: { [RESERVE_ASK_HEADER]: header } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, signature: res.headers[RESERVE_ANSWER_HEADER] as string | undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A real ask, as the API makes it: the header (whose fifth field is its nonce) and the answer. */
async function reserve(w: ReserveWorld, id: string, operation: ReservedOperation): Promise<{ header: string; nonce: string; dispatch: Dispatch }> {
  const body = JSON.stringify(operation);
  const header = encodeReserveAsk(SECRET, id, 'prod', Date.now(), body);
  const answer = await rawAsk(w.address, header, body);
  expect(answer.status).toBe(200);
  return { header, nonce: header.split(' ')[4] as string, dispatch: JSON.parse(answer.body) as Dispatch };
}

async function send(address: { host: string; port: number }, datagrams: readonly Buffer[]): Promise<void> {
  const socket = createSocket('udp4');
  await Promise.all(datagrams.map((d) => new Promise<void>((resolve) => socket.send(d, address.port, address.host, () => resolve()))));
  socket.close();
}

const verdict = (kind: ReservationVerdictKind, id: string, askNonce: string, at = Date.now(), secret = SECRET) => encodeReservationVerdict(secret, kind, id, askNonce, at);

describe('reservations between the API and a driver replica', () => {
  it('a POST is stored handed out (RUNNING, attempt 1) and finishes with no claim written by the replica', async () => {
    const w = await start();
    const updates = w.counted.updates;
    const reply = await submitOperation(w.app, 'prod', CONFIG_MAP('reserved'));
    expect(reply.status).toBe(202);
    expect(reply.json).toMatchObject({ state: 'RUNNING', attempts: 1, agentId: 'a1' });
    await vi.waitFor(async () => expect((await getOperation(world.table, reply.json.id as string))?.state).toBe('SUCCEEDED'), WAIT);
    // The only conditional write of the replica is the result's.
    expect(w.counted.updates - updates).toBe(1);
    expect(await getOperation(world.table, reply.json.id as string)).toMatchObject({ attempt: 1, dispatch: { agentId: 'a1', replicaId: w.driver.replicaId } });
    expect({ reserved: await w.reservations('reserved'), handedOut: await w.reservations('handed_out'), sent: await w.handedOut() }).toEqual({ reserved: 1, handedOut: 1, sent: 1 });
  });

  it('a lost "stored" is sent once the hold is over, from the operation as stored, and only once', async () => {
    const w = await start();
    const reserveOf = w.wakes.reservations.reserve.bind(w.wakes.reservations);
    // The API's "stored" datagram is lost; its reservation is otherwise as made.
    vi.spyOn(w.wakes.reservations, 'reserve').mockImplementation(async (...args) => {
      const r = await reserveOf(...args);
      return r === undefined ? r : { ...r, dispatch: r.dispatch, handOut: () => undefined };
    });
    const reply = await submitOperation(w.app, 'prod', CONFIG_MAP('stored-lost'));
    expect(reply.json).toMatchObject({ state: 'RUNNING', attempts: 1 });
    const id = reply.json.id as string;
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    // The replica passes rarely here: the hold's end found it stored with its hand-out.
    expect({ found: await w.reservations('found_stored'), expired: await w.reservations('expired') }).toEqual({ found: 1, expired: 0 });
    await settle();
    expect(await w.handedOut()).toBe(1);
    expect(await getOperation(world.table, id)).toMatchObject({ attempt: 1 });
  });

  it('an operation whose entries\' write fails and whose "stored" is lost still runs, once, without a retry', async () => {
    const entries = refusingOnce('BatchWrite');
    const w = await start({ apiTable: entries.table });
    const reserveOf = w.wakes.reservations.reserve.bind(w.wakes.reservations);
    // "stored" is told and lost: the API's release after the failed store is then no verdict at all.
    vi.spyOn(w.wakes.reservations, 'reserve').mockImplementation(async (...args) => {
      const r = await reserveOf(...args);
      return r === undefined ? r : { ...r, dispatch: r.dispatch, handOut: () => undefined, release: () => undefined };
    });
    entries.arm();
    const key = randomUUID();
    const first = await submitOperation(w.app, 'prod', CONFIG_MAP('entries-and-stored-lost'), key);
    expect(first.status).toBeGreaterThanOrEqual(500);
    const id = operationIdOf('prod', 'admin-token:admin-token', key);
    expect(await getOperation(world.table, id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
    // No queue entry, no "stored", and no retry: the hold's end finds it and sends it.
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    expect({ found: await w.reservations('found_stored'), sent: await w.handedOut() }).toEqual({ found: 1, sent: 1 });
  });

  it('"release", a named wake and the hold\'s end each free the id for the queue path', async () => {
    const w = await start();
    const free = async (name: string, settleIt: (id: string, nonce: string) => Promise<void>, outcome: string) => {
      const { id, operation } = described(name);
      const { nonce } = await reserve(w, id, operation);
      const before = await w.reservations(outcome);
      await settleIt(id, nonce);
      await vi.waitFor(async () => expect({ name, outcome: await w.reservations(outcome) }).toEqual({ name, outcome: before + 1 }), WAIT);
      // Stored queued, as the API does when it gives a reservation up: a pass claims it.
      await store(operation);
      w.driver.wake('operations');
      await vi.waitFor(async () => expect({ name, state: (await getOperation(world.table, id))?.state }).toEqual({ name, state: 'SUCCEEDED' }), WAIT);
    };
    await free('released', (id, nonce) => send(w.address, [verdict('release', id, nonce)]), 'released');
    await free('woken', (id) => send(w.address, [encodeWake(SECRET, 'operations', Date.now(), undefined, { id, account: 'prod' })]), 'released');
    await free('expired', async () => undefined, 'expired');
    expect(await w.reservations('reserved')).toBe(3);
  });

  it('forged, replayed, stale and altered reservation asks are refused and reserve nothing', async () => {
    const w = await start();
    const { id, operation } = described('guarded');
    const body = JSON.stringify(operation);
    const real = encodeReserveAsk(SECRET, id, 'prod', Date.now(), body);
    const other = described('other').operation;
    const cases: [string, string, string, number][] = [
      ['forged', encodeReserveAsk(ROGUE, id, 'prod', Date.now(), body), body, 403],
      ['altered body', real, JSON.stringify({ ...operation, record: { ...operation.record, objects: 2 } }), 403],
      ['stale', encodeReserveAsk(SECRET, id, 'prod', Date.now() - 31_000, body), body, 403],
      ['another operation than it names', encodeReserveAsk(SECRET, id, 'prod', Date.now(), JSON.stringify(other)), JSON.stringify(other), 403],
      ['malformed', 'vrs1 nonsense', body, 403],
    ];
    for (const [what, header, sent, status] of cases) expect({ what, status: (await rawAsk(w.address, header, sent)).status }).toEqual({ what, status });
    expect(await w.reservations('reserved')).toBe(0);
    const first = await rawAsk(w.address, real, body);
    expect(first.status).toBe(200);
    expect((await rawAsk(w.address, real, body)).status).toBe(403);
    expect(await w.reservations('reserved')).toBe(1);
    expect({ forged: await w.reservations('forged'), stale: await w.reservations('stale'), replayed: await w.reservations('replayed'), malformed: await w.reservations('malformed') }).toEqual({ forged: 2, stale: 1, replayed: 1, malformed: 2 });
  });

  it('forged, stale, replayed and misdirected "stored" verdicts hand nothing out; the real one does, once', async () => {
    const w = await start();
    const { id, operation } = described('verdicts');
    const { nonce, dispatch } = await reserve(w, id, operation);
    await store(operation, dispatch);
    const other = described('other');
    const { nonce: otherNonce } = await reserve(w, other.id, other.operation);
    await send(w.address, [verdict('stored', id, nonce, Date.now(), ROGUE), verdict('stored', id, nonce, Date.now() - 31_000), verdict('stored', id, otherNonce)]);
    await vi.waitFor(async () => expect({ forged: await w.wakes_('forged'), stale: await w.wakes_('stale'), unknown: await w.reservations('unknown') }).toEqual({ forged: 1, stale: 1, unknown: 1 }), WAIT);
    await settle();
    expect(await w.handedOut()).toBe(0);
    expect(await getOperation(world.table, id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
    const real = verdict('stored', id, nonce);
    await send(w.address, [real]);
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    await send(w.address, [real, verdict('stored', id, nonce)]);
    await vi.waitFor(async () => expect({ replayed: await w.wakes_('replayed'), unknown: await w.reservations('unknown') }).toEqual({ replayed: 1, unknown: 2 }), WAIT);
    await settle();
    expect(await w.handedOut()).toBe(1);
  });

  it('an answer the API does not believe has it store the operation queued and free the replica', async () => {
    const w = await start();
    // A replica of the test's making answers every ask "reserved" with what `forge` makes of it, and
    // hears the datagrams sent to its port.
    const released: string[] = [];
    const udp = createSocket('udp4');
    let forge: (ask: string) => { body: string; signature?: string } = () => ({ body: '' });
    const server: Server = createServer((req, res) => {
      req.resume();
      const { body, signature } = forge(String(req.headers[RESERVE_ASK_HEADER]));
      res.writeHead(200, { 'content-type': 'application/json', ...(signature === undefined ? {} : { [RESERVE_ANSWER_HEADER]: signature }) }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => udp.bind(port, '127.0.0.1', r));
    udp.on('message', (d) => released.push(d.toString('latin1').split(' ')[1] as string));
    cleanups.push(() => new Promise((r) => server.close(r)));
    cleanups.push(() => new Promise<void>((r) => udp.close(() => r())));
    vi.spyOn(w.wakes, 'addresses').mockResolvedValue([`127.0.0.1:${port}`]);
    const dispatch = JSON.stringify({ agentId: 'a1', sessionId: 'forged-session', replicaId: 'forged', at: Date.now() });
    let previous = '';
    const forgeries: Record<string, (ask: string) => { body: string; signature?: string }> = {
      unsigned: () => ({ body: dispatch }),
      'signed with another secret': (ask) => ({ body: dispatch, signature: signReserveAnswer(ROGUE, ask, dispatch) }),
      'signed for another ask': () => ({ body: dispatch, signature: signReserveAnswer(SECRET, previous, dispatch) }),
      altered: (ask) => ({ body: dispatch.replace('forged-session', 'another-session'), signature: signReserveAnswer(SECRET, ask, dispatch) }),
      'not a hand-out': (ask) => ({ body: '{"agentId":1}', signature: signReserveAnswer(SECRET, ask, '{"agentId":1}') }),
    };
    for (const [what, make] of Object.entries(forgeries)) {
      forge = (ask) => {
        const made = make(ask);
        previous = ask;
        return made;
      };
      const reply = await submitOperation(w.app, 'prod', CONFIG_MAP(`unbelieved-${released.length}`));
      expect({ what, state: reply.json.state }).toEqual({ what, state: 'QUEUED' });
      // It may have set an agent aside: told to free it (beside the named wake).
      await vi.waitFor(() => expect({ what, released: released.filter((k) => k === 'release').length }).toEqual({ what, released: Object.keys(forgeries).indexOf(what) + 1 }), WAIT);
    }
  });

  it('an agent that left between the reservation and "stored" gets nothing; the operation goes out again when it is back', async () => {
    const w = await start({ pollMs: 200 });
    const reserveOf = w.wakes.reservations.reserve.bind(w.wakes.reservations);
    vi.spyOn(w.wakes.reservations, 'reserve').mockImplementation(async (...args) => {
      const r = await reserveOf(...args);
      await w.agent.stop();
      await vi.waitFor(() => expect(w.driver.sessions()).toHaveLength(0), WAIT);
      return r;
    });
    const reply = await submitOperation(w.app, 'prod', CONFIG_MAP('left'));
    expect(reply.json).toMatchObject({ state: 'RUNNING', attempts: 1 });
    const id = reply.json.id as string;
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.dispatch?.endedAt).toBeDefined(), WAIT);
    expect(await w.reservations('handed_out')).toBe(1);
    await world.agent('a1', { target: `127.0.0.1:${w.driver.port}` });
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    expect(await getOperation(world.table, id)).toMatchObject({ attempt: 2 });
  });

  it('a retry of a POST whose operation is in hand here reserves nothing and sends nothing again', async () => {
    const w = await start({ pollMs: 200 });
    world.kube.faults.latency(1_500, { resource: 'configmaps', name: 'retried' });
    const key = randomUUID();
    const first = await submitOperation(w.app, 'prod', CONFIG_MAP('retried'), key);
    expect(first.json).toMatchObject({ state: 'RUNNING', attempts: 1 });
    await vi.waitFor(async () => expect(await w.handedOut()).toBe(1), WAIT);
    const again = await submitOperation(w.app, 'prod', CONFIG_MAP('retried'), key);
    expect(again.json.id).toBe(first.json.id);
    // Passes come and go while the agent applies: none sends it again.
    await settle();
    await settle();
    expect(await w.handedOut()).toBe(1);
    expect(await w.reservations('reserved')).toBe(1);
    await vi.waitFor(async () => expect((await getOperation(world.table, first.json.id as string))?.state).toBe('SUCCEEDED'), WAIT);
    expect(await w.handedOut()).toBe(1);
  });

  it("an operation whose entries' write fails while its put wins still goes to its agent, once; a retry with its key answers it", async () => {
    const entries = refusingOnce('BatchWrite');
    const w = await start({ apiTable: entries.table });
    const key = randomUUID();
    entries.arm();
    const first = await submitOperation(w.app, 'prod', CONFIG_MAP('entries-refused'), key);
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(entries.armed).toBe(false);
    // No queue entry, and the replica passes rarely: only "stored" can have sent it.
    await vi.waitFor(async () => expect(await w.handedOut()).toBe(1), WAIT);
    const again = await submitOperation(w.app, 'prod', CONFIG_MAP('entries-refused'), key);
    expect(again.status).toBeLessThan(300);
    await vi.waitFor(async () => expect((await getOperation(world.table, again.json.id as string))?.state).toBe('SUCCEEDED'), WAIT);
    expect({ reserved: await w.reservations('reserved'), handedOut: await w.reservations('handed_out'), sent: await w.handedOut() }).toEqual({ reserved: 1, handedOut: 1, sent: 1 });
  });

  it('two concurrent POSTs with one key: one operation, one hand-out', async () => {
    const w = await start({ pollMs: 200 });
    const key = randomUUID();
    const replies = await Promise.all([submitOperation(w.app, 'prod', CONFIG_MAP('twice'), key), submitOperation(w.app, 'prod', CONFIG_MAP('twice'), key)]);
    expect(replies.map((r) => r.json.id)).toEqual([replies[0]?.json.id, replies[0]?.json.id]);
    const id = replies[0]?.json.id as string;
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    // Passes come and go: none sends it again.
    await settle();
    await settle();
    expect(await w.handedOut()).toBe(1);
    expect(await getOperation(world.table, id)).toMatchObject({ attempt: 1 });
  });
});
