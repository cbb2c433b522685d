/**
 * Wakes end to end (docs/protocol.md#6b-wakes): the API and driver replicas share only the table and
 * the wake secret, as deployed; replicas poll so rarely here (a minute) that only a wake can bring
 * work to them within a test. Real UDP sockets, real gRPC agents, dynalite.
 */
import { createSocket } from 'node:dgram';
import type { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import type { Driver } from '../driver/server.ts';
import { createApp } from '../functions/app.ts';
import type { ApiEnv } from '../functions/auth/caller.ts';
import { WakeSender } from '../functions/wake/sender.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import { CHANGE_PARTITIONS, isAccountPartition } from '../shared/table/accounts/keys.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { liveSessions } from '../shared/table/agents/sessions.ts';
import { claimOperation, compress, createOperation, finishOperation, getOperation } from '../shared/table/operations/operations.ts';
import { requestHash } from '../shared/operations/hash.ts';
import type { NamedOperation } from '../shared/wake/message.ts';
import { parseWakeAddress } from '../shared/wake/address.ts';
import { encodeWake, type WakeTopic } from '../shared/wake/message.ts';
import { useAccountsWorld } from './support/accounts-world.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from './support/api.ts';
import { startWakeReplica } from './support/wake-replica.ts';
import { watchedTable } from './support/watched-table.ts';
import { refusingOnce } from './support/intercepted-table.ts';
import { submitOperation } from './support/operations.ts';
import { OPERATION_QUEUE_PARTITIONS } from '../shared/table/operations/keys.ts';

const world = useAccountsWorld();
const SECRET = 'wake-secret-for-tests-0123456789abcdef';
const RARELY = 60_000;
const WAIT = { timeout: 20_000, interval: 20 };
/** Long enough for a read a wake set off to have begun: it begins within a turn or two of the event loop. */
const SETTLE_MS = 300;

/** Reads of the work feed, of the operation queue and of account items a replica has begun, counted on its own client. */
class CountedTable {
  readonly table: TableRef;
  readonly reads = { feed: 0, queue: 0, accounts: 0 };
  readonly writes = { accounts: 0 };

  constructor(tableName: string, endpoint: string) {
    this.table = watchedTable(tableName, endpoint, (name, input) => {
      const pk = (input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk'];
      // Every read of the feed or the queue queries each of its shards once: one read is one Query of the first.
      if (name === 'QueryCommand' && pk === CHANGE_PARTITIONS[0]) this.reads.feed++;
      if (name === 'QueryCommand' && pk === OPERATION_QUEUE_PARTITIONS[0]) this.reads.queue++;
      const keys = (input as { RequestItems?: Record<string, { Keys?: { pk?: unknown }[] }> }).RequestItems?.[tableName]?.Keys ?? [];
      if (/^BatchGet(Item)?Command$/.test(name) && keys.some((k) => isAccountPartition(String(k.pk)))) this.reads.accounts++;
      // Writes to account items, but for the agent's own report of its cluster, which its probe stamps on a schedule of its own.
      const { Key: key, UpdateExpression: update } = input as { Key?: { pk?: unknown }; UpdateExpression?: string };
      if (/^Update(Item)?Command$/.test(name) && isAccountPartition(String(key?.pk)) && !update?.startsWith('SET #cluster ')) this.writes.accounts++;
    });
  }
}

interface WakeWorld {
  app: Hono<ApiEnv>;
  driver: Driver;
  counted: CountedTable;
  /** The replica's wake endpoint, as its session items record it. */
  address: { host: string; port: number };
}

/**
 * `wake`: the replica's wake section beyond its address. `{ results: false }` has it take no
 * reservation asks (as a replica of an earlier version): the API stores operations queued and wakes it.
 */
async function start(options: { secret?: string | undefined; apiSecret?: string; pollMs?: number; wake?: Record<string, unknown>; apiTable?: (table: TableRef) => TableRef } = {}): Promise<WakeWorld> {
  await world.fresh([{ name: 'prod' }]);
  const counted = new CountedTable(world.table.tableName, world.tables.endpoint);
  const pollMs = options.pollMs ?? RARELY;
  const driver = await startWakeReplica(world, {
    table: counted.table,
    secret: 'secret' in options ? options.secret : SECRET,
    assignmentPollMs: pollMs,
    operationsPollMs: pollMs,
    ...(options.wake === undefined ? {} : { wake: options.wake }),
  });
  const wakes = new WakeSender({ table: world.table, clock: systemClock, log: silentLogger(), secret: options.apiSecret ?? SECRET });
  // No operation events: the API and the replica share nothing but the table, as when deployed.
  const app = createApp({ table: options.apiTable?.(world.table) ?? world.table, clock: systemClock, auth: adminTokenAuth(), wakes });
  world.onReset(() => wakes.close());
  await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(async () => expect(await liveSessions(world.table, Date.now())).toHaveLength(1), WAIT);
  const [session] = await liveSessions(world.table, Date.now());
  // The session's own reads (the queue at its welcome) are over before a test counts.
  await settle();
  const address = session?.wake === undefined ? { host: '', port: 0 } : (parseWakeAddress(session.wake) as { host: string; port: number });
  return { app, driver, counted, address };
}

async function call(app: Hono<ApiEnv>, method: string, path: string, body?: unknown): Promise<number> {
  const res = await app.request(path, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return res.status;
}

async function activate(w: WakeWorld): Promise<void> {
  expect(await call(w.app, 'POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: world.kubeconfig('prod') }])).toBe(200);
  expect(await call(w.app, 'PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).toBe(200);
}

async function wakeCount(driver: Driver, outcome: string): Promise<number> {
  return (await driver.metrics.wakes.get()).values.find((x) => x.labels.outcome === outcome)?.value ?? 0;
}

async function namedCount(driver: Driver, outcome: string): Promise<number> {
  return (await driver.metrics.namedWakes.get()).values.find((x) => x.labels.outcome === outcome)?.value ?? 0;
}

async function send(address: { host: string; port: number }, datagrams: readonly Buffer[]): Promise<void> {
  const socket = createSocket('udp4');
  await Promise.all(datagrams.map((d) => new Promise<void>((resolve) => socket.send(d, address.port, address.host, () => resolve()))));
  socket.close();
}

const wake = (topic: WakeTopic, at = Date.now(), secret = SECRET) => encodeWake(secret, topic, at);
const named = (operation: NamedOperation, secret = SECRET) => encodeWake(secret, 'operations', Date.now(), undefined, operation);

/** An operation stored QUEUED straight in the table, as the API stores one, but with no wake sent. */
async function queued(account: string, name: string): Promise<string> {
  const request = { action: 'deploy' as const, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } }] };
  const { record } = await createOperation(world.table, {
    account,
    submittedBy: 'admin:test',
    idempotencyKey: name,
    requestHash: requestHash(account, request),
    request: compress(request),
    record: { action: 'deploy', objects: 1 },
    now: Date.now(),
  });
  return record.id;
}

async function activeWorld(options: Parameters<typeof start>[0] = {}): Promise<WakeWorld> {
  const w = await start(options);
  await activate(w);
  await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
  // The reads the activation set off are over before a test counts.
  await settle();
  return w;
}
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
/** A replica that takes no reservation asks: operations reach it queued, through named wakes. */
const NO_RESERVATIONS = { results: false };

/**
 * The record without the agent's own report of its cluster (`cluster`), which its probe stamps on a
 * schedule of its own, wake or none; every field the driver's assignment writes stays compared.
 */
function withoutClusterReport<T extends object | undefined>(record: T): T {
  if (record === undefined) return record;
  const { cluster: _cluster, ...rest } = record as T & { cluster?: unknown };
  return rest as T;
}

describe('wakes between the API and driver replicas', () => {
  it('the replica records its wake address on its session items, live while their lease is', async () => {
    const w = await start();
    expect(w.address).toEqual({ host: '127.0.0.1', port: expect.any(Number) });
    expect(w.address.port).toBeGreaterThan(0);
  });

  it('a PATCH to ACTIVE of one account reaches the agent at once through a wake naming it, without reading the work feed', async () => {
    const w = await start();
    const before = { ...w.counted.reads };
    await activate(w);
    await vi.waitFor(async () => expect(((await world.account('prod')).agents as unknown[]).length).toBe(1), WAIT);
    expect(await wakeCount(w.driver, 'accepted')).toBeGreaterThanOrEqual(1);
    // Settled from its item, read fresh: the feed (polled once a minute here) was not read.
    expect(w.counted.reads.accounts).toBeGreaterThan(before.accounts);
    expect(w.counted.reads.feed).toBe(before.feed);
  });

  it('a wake naming an account it has nothing to do for reads its item and writes nothing: one not there, one already settled, one forged', async () => {
    const w = await activeWorld();
    const record = withoutClusterReport(await world.record('prod'));
    const before = { reads: { ...w.counted.reads }, writes: { ...w.counted.writes }, accepted: await wakeCount(w.driver, 'accepted') };
    const namedAccount = (account: string, secret = SECRET) => encodeWake(secret, 'accounts', Date.now(), undefined, { account });
    await send(w.address, [namedAccount('prod', 'another-secret-0123456789abcdefghij')]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'forged')).toBe(1), WAIT);
    await settle();
    expect(w.counted.reads).toEqual(before.reads);
    await send(w.address, [namedAccount('no-such-account'), namedAccount('prod')]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'accepted')).toBe(before.accepted + 2), WAIT);
    await vi.waitFor(() => expect(w.counted.reads.accounts).toBeGreaterThan(before.reads.accounts), WAIT);
    await settle();
    expect(w.counted.reads.feed).toBe(before.reads.feed);
    expect(w.counted.writes).toEqual(before.writes);
    expect(withoutClusterReport(await world.record('prod'))).toEqual(record);
    expect(await world.record('no-such-account')).toBeUndefined();
  });

  it('an operation is handed out at once through a wake, without waiting for a poll', async () => {
    const w = await start({ wake: NO_RESERVATIONS });
    await activate(w);
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
    const reply = await submitOperation(w.app, 'prod', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'woken', namespace: 'default' }, data: { a: '1' } }] });
    expect(reply.json).toMatchObject({ state: 'QUEUED' });
    expect(reply.status).toBe(202);
    await vi.waitFor(async () => expect((await getOperation(world.table, reply.json.id as string))?.attempt ?? 0).toBeGreaterThanOrEqual(1), WAIT);
  });

  it('the wake names the queued operation: the replica claims it at once, without reading the queue', async () => {
    const w = await activeWorld({ wake: NO_RESERVATIONS });
    const before = { queue: w.counted.reads.queue, accepted: await wakeCount(w.driver, 'accepted') };
    const reply = await submitOperation(w.app, 'prod', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'named', namespace: 'default' }, data: { a: '1' } }] });
    expect(reply.status).toBe(202);
    await vi.waitFor(async () => expect((await getOperation(world.table, reply.json.id as string))?.state).toBe('SUCCEEDED'), WAIT);
    expect(await wakeCount(w.driver, 'accepted')).toBe(before.accepted + 1);
    expect(w.counted.reads.queue).toBe(before.queue);
    expect(await getOperation(world.table, reply.json.id as string)).toMatchObject({ attempt: 1, dispatch: { agentId: 'a1' } });
    expect(await namedCount(w.driver, 'claimed')).toBe(1);
    expect(await namedCount(w.driver, 'not_claimed')).toBe(0);
  });

  it("a queued operation whose entries' write fails while its put wins is still named in a wake, and runs; a retry with its key answers it", async () => {
    const entries = refusingOnce('BatchWrite');
    const w = await activeWorld({ wake: NO_RESERVATIONS, apiTable: entries.table });
    const key = 'entries-refused';
    const body = { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'entries-refused', namespace: 'default' }, data: { a: '1' } }] };
    entries.arm();
    const first = await submitOperation(w.app, 'prod', body, key);
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(entries.armed).toBe(false);
    // No queue entry, and the replica polls once a minute: only the named wake can have it claimed.
    await vi.waitFor(async () => expect(await namedCount(w.driver, 'claimed')).toBe(1), WAIT);
    const again = await submitOperation(w.app, 'prod', body, key);
    expect(again.status).toBeLessThan(300);
    await vi.waitFor(async () => expect((await getOperation(world.table, again.json.id as string))?.state).toBe('SUCCEEDED'), WAIT);
    expect(await getOperation(world.table, again.json.id as string)).toMatchObject({ attempt: 1, dispatch: { agentId: 'a1' } });
  });

  it('a named wake it cannot use changes nothing and leads to the queue read: claimed elsewhere, finished, an account held nowhere here, another account', async () => {
    const w = await activeWorld();
    const elsewhere = await queued('prod', 'claimed-elsewhere');
    // Handed out by another replica on a stream that is live (a queue read leaves it there).
    const [live] = await liveSessions(world.table, Date.now());
    expect(await claimOperation(world.table, elsewhere, 0, { agentId: 'a1', sessionId: live?.sessionId as string, replicaId: 'other-replica', at: Date.now() }, Date.now())).toBeDefined();
    const done = await queued('prod', 'finished-already');
    expect(await finishOperation(world.table, done, { state: 'FAILED', message: 'finished already' }, Date.now())).toBeDefined();
    const notHere = await queued('not-held-here', 'not-held');
    const cases: [string, NamedOperation, string][] = [
      ['claimed by another replica', { id: elsewhere, account: 'prod' }, 'not_claimed'],
      ['finished', { id: done, account: 'prod' }, 'not_claimed'],
      ['of an account no agent here holds', { id: notHere, account: 'not-held-here' }, 'not_held'],
      // The name says prod, the operation is of another account: the claim's condition refuses it.
      ['named with another account', { id: notHere, account: 'prod' }, 'not_claimed'],
      ['not there at all', { id: 'e'.repeat(32), account: 'prod' }, 'not_claimed'],
    ];
    for (const [what, operation, outcome] of cases) {
      const records = await Promise.all([elsewhere, done, notHere].map((id) => getOperation(world.table, id)));
      const before = w.counted.reads.queue;
      const counted = await namedCount(w.driver, outcome);
      await send(w.address, [named(operation)]);
      await vi.waitFor(() => expect({ what, reads: w.counted.reads.queue }).toEqual({ what, reads: before + 1 }), WAIT);
      expect({ what, outcome: await namedCount(w.driver, outcome) }).toEqual({ what, outcome: counted + 1 });
      await settle();
      expect({ what, records: await Promise.all([elsewhere, done, notHere].map((id) => getOperation(world.table, id))) }).toEqual({ what, records });
    }
    expect(await getOperation(world.table, notHere)).toMatchObject({ state: 'QUEUED', attempt: 0 });
    expect(await getOperation(world.table, 'e'.repeat(32))).toBeUndefined();
  });

  it('a forged or replayed named wake claims nothing and reads nothing', async () => {
    const w = await activeWorld();
    const id = await queued('prod', 'guarded');
    const before = w.counted.reads.queue;
    await send(w.address, [named({ id, account: 'prod' }, 'another-secret-0123456789abcdefghij')]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'forged')).toBe(1), WAIT);
    await settle();
    expect(await getOperation(world.table, id)).toMatchObject({ state: 'QUEUED', attempt: 0 });
    const datagram = named({ id, account: 'prod' });
    await send(w.address, [datagram]);
    await vi.waitFor(async () => expect((await getOperation(world.table, id))?.state).toBe('SUCCEEDED'), WAIT);
    const claimed = await getOperation(world.table, id);
    await send(w.address, [datagram, datagram]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'replayed')).toBe(2), WAIT);
    await settle();
    expect(await getOperation(world.table, id)).toEqual(claimed);
    expect(claimed).toMatchObject({ attempt: 1 });
    expect(w.counted.reads.queue).toBe(before);
  });

  it('a forged or malformed wake triggers no read', async () => {
    const w = await start();
    const before = { ...w.counted.reads };
    await send(w.address, [wake('accounts', Date.now(), 'another-secret-0123456789abcdefghij'), Buffer.from('vw1 accounts 1 2 3'), Buffer.alloc(4096, 1)]);
    await vi.waitFor(async () => expect((await wakeCount(w.driver, 'forged')) + (await wakeCount(w.driver, 'malformed'))).toBe(3), WAIT);
    await settle();
    expect(w.counted.reads).toEqual(before);
    expect(await wakeCount(w.driver, 'accepted')).toBe(0);
  });

  it('a replayed wake triggers no read: only its first copy is taken', async () => {
    const w = await start();
    const datagram = wake('operations');
    const before = w.counted.reads.queue;
    await send(w.address, [datagram]);
    await vi.waitFor(() => expect(w.counted.reads.queue).toBe(before + 1), WAIT);
    await settle();
    await send(w.address, [datagram, datagram]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'replayed')).toBe(2), WAIT);
    await settle();
    expect(w.counted.reads.queue).toBe(before + 1);
  });

  it('a burst of wakes coalesces: a few reads, not one per wake', async () => {
    const w = await start();
    const before = w.counted.reads.feed;
    await send(w.address, Array.from({ length: 30 }, () => wake('accounts')));
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'accepted')).toBe(30), WAIT);
    await settle();
    const reads = w.counted.reads.feed - before;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
  });

  it('a wake older than the window is refused; a late one within it is harmless', async () => {
    const w = await start();
    await activate(w);
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
    await settle();
    const record = withoutClusterReport(await world.record('prod'));
    const before = w.counted.reads.feed;
    await send(w.address, [wake('accounts', Date.now() - 31_000), wake('accounts', Date.now() + 31_000)]);
    await vi.waitFor(async () => expect(await wakeCount(w.driver, 'stale')).toBe(2), WAIT);
    await settle();
    expect(w.counted.reads.feed).toBe(before);
    // Late, after the work it was sent for is done: one more read finds nothing to do.
    await send(w.address, [wake('accounts', Date.now() - 10_000)]);
    await vi.waitFor(() => expect(w.counted.reads.feed).toBe(before + 1), WAIT);
    await settle();
    expect(withoutClusterReport(await world.record('prod'))).toEqual(record);
  });

  it('a lost wake is covered by the poll', async () => {
    // The API signs with another secret: every wake it sends is dropped, as a lost one would be.
    const w = await start({ apiSecret: 'a-secret-the-replica-does-not-know-0123', pollMs: 200 });
    await activate(w);
    await vi.waitFor(async () => expect(((await world.account('prod')).agents as unknown[]).length).toBe(1), WAIT);
    expect(await wakeCount(w.driver, 'accepted')).toBe(0);
    expect(await wakeCount(w.driver, 'forged')).toBeGreaterThanOrEqual(1);
  });

  it('without a wake secret the replica records no address and takes no wakes', async () => {
    const w = await start({ secret: undefined, pollMs: 200 });
    expect(w.address.port).toBe(0);
    await activate(w);
    await vi.waitFor(async () => expect(((await world.account('prod')).agents as unknown[]).length).toBe(1), WAIT);
  });
});
