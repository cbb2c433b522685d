import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../shared/log.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { PK } from '../../shared/table/core/keys.ts';
import { accountOperationsPk } from '../../shared/table/operations/keys.ts';
import { compress, createOperation, getOperation } from '../../shared/table/operations/operations.ts';
import { markCacheCleanup, pendingCacheCleanups } from '../../shared/table/resources/cleanup.ts';
import { putAgentStaticAccounts, removeAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { cacheCount, seedCache } from '../../test/support/account-cache.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { useTestTables } from '../../test/support/table.ts';
import { CacheCleanupLoop, type CacheCleanupOptions } from './cache-cleanup.ts';

const tables = useTestTables();
const file = { id: 'driver-config', kind: 'driver-config' as const };
const DELAY = 30_000;

function loopOf(t: TableRef, clock: ManualClock, holder = 'replica-1', options: CacheCleanupOptions = {}): CacheCleanupLoop {
  return new CacheCleanupLoop({ table: t, clock, log: silentLogger(), holder }, { delayMs: DELAY, ...options });
}

describe('cache cleanup of accounts that went (docs/table.md#cache-cleanup)', () => {
  it('deletes the cache of an account its source dropped, after the delay, and then the marker', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'gone' }, { name: 'kept' }], clock.now());
    await seedCache(t, 'gone', 60);
    await seedCache(t, 'kept', 3);
    await syncSource(t, file, [{ name: 'kept' }], clock.now());
    expect(await getAccount(t, 'gone')).toBeUndefined();
    expect(await pendingCacheCleanups(t)).toEqual([{ account: 'gone', removedAt: clock.now() }]);

    const loop = loopOf(t, clock);
    expect(await loop.pass()).toEqual(new Map());
    expect(await cacheCount(t, 'gone')).toBe(65);
    await clock.advance(DELAY);
    expect(await loop.pass()).toEqual(new Map([['gone', 'done']]));
    expect(await cacheCount(t, 'gone')).toBe(0);
    expect(await cacheCount(t, 'kept')).toBe(8);
    expect(await pendingCacheCleanups(t)).toEqual([]);
  });

  it("deletes the account's operation-list entries with its cache; the operations stay readable by id until they expire", async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'gone' }, { name: 'kept' }], clock.now());
    const operation = (account: string, key: string) =>
      createOperation(t, { account, submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: 'h', request: compress({}), record: { action: 'scale', objects: 1 }, now: clock.now() });
    const made = await Promise.all([...Array.from({ length: 30 }, (_, i) => operation('gone', `k${i}`)), operation('kept', 'k0')]);
    const entries = async (account: string) =>
      (await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': accountOperationsPk(account) }, Select: 'COUNT', ConsistentRead: true }))).Count;
    expect([await entries('gone'), await entries('kept')]).toEqual([30, 1]);
    await syncSource(t, file, [{ name: 'kept' }], clock.now());
    await clock.advance(DELAY);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['gone', 'done']]));
    expect([await entries('gone'), await entries('kept')]).toEqual([0, 1]);
    expect(await getOperation(t, made[0]!.record.id)).toMatchObject({ account: 'gone' });
  });

  it("deletes the cache of an agent's static account when the agent's announcement goes", async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await putAgentStaticAccounts(t, 'agent-1', 'z', [{ name: 'static' }], clock.now());
    await seedCache(t, 'static', 30);
    await removeAgentStaticAccounts(t, 'agent-1', clock.now());
    await clock.advance(DELAY);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['static', 'done']]));
    expect(await cacheCount(t, 'static')).toBe(0);
  });

  it('keeps the cache while another source still defines the account (no marker)', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'both' }], clock.now());
    await putAgentStaticAccounts(t, 'agent-1', 'z', [{ name: 'both' }], clock.now());
    await seedCache(t, 'both', 5);
    await syncSource(t, file, [], clock.now());
    expect(await pendingCacheCleanups(t)).toEqual([]);
    await clock.advance(DELAY);
    await loopOf(t, clock).pass();
    expect(await cacheCount(t, 'both')).toBe(10);
  });

  it('resumes after a loop stopped after one batch: the next holder takes over once the lease has run out', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'big' }], clock.now());
    await seedCache(t, 'big', 100);
    await syncSource(t, file, [], clock.now());
    await clock.advance(DELAY);

    const stop = new AbortController();
    let batches = 0;
    const first = loopOf(t, clock, 'replica-1', { afterBatch: () => (++batches === 2 ? stop.abort() : undefined) });
    expect(await first.pass(stop.signal)).toEqual(new Map([['big', 'stopped']]));
    // The progress, scope set and health went first, then one batch of objects.
    expect(await cacheCount(t, 'big')).toBe(105 - 3 - 25);
    expect(await pendingCacheCleanups(t)).toHaveLength(1);

    const second = loopOf(t, clock, 'replica-2');
    expect(await second.pass()).toEqual(new Map([['big', 'lost']]));
    expect(await cacheCount(t, 'big')).toBe(77);
    await clock.advance(30_001);
    expect(await second.pass()).toEqual(new Map([['big', 'done']]));
    expect(await cacheCount(t, 'big')).toBe(0);
    expect(await pendingCacheCleanups(t)).toEqual([]);
  });

  it('keeps the data of an account registered again before the cleanup ran, and drops the marker', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'again' }], clock.now());
    await seedCache(t, 'again', 10, 'old');
    await syncSource(t, file, [], clock.now());
    await clock.advance(1_000);
    await syncSource(t, file, [{ name: 'again' }], clock.now());
    const record = await getAccount(t, 'again', { consistent: true });
    await updateAccount(t, 'again', record?.version ?? 0, { registration: { at: clock.now() } }, clock.now());
    await seedCache(t, 'again', 10, 'new');
    await clock.advance(DELAY);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['again', 'cancelled']]));
    expect(await cacheCount(t, 'again')).toBe(25);
    expect(await pendingCacheCleanups(t)).toEqual([]);
  });

  it('drops a marker written before a removal that never happened (the account is still registered)', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'live' }], clock.now());
    const record = await getAccount(t, 'live', { consistent: true });
    await updateAccount(t, 'live', record?.version ?? 0, { registration: { at: clock.now() } }, clock.now());
    await seedCache(t, 'live', 4);
    await markCacheCleanup(t, 'live', clock.now());
    await clock.advance(DELAY);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['live', 'cancelled']]));
    expect(await cacheCount(t, 'live')).toBe(9);
  });

  it('waits while the driver has not yet taken the account from the agent caching it', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'held' }], clock.now());
    const record = await getAccount(t, 'held', { consistent: true });
    await updateAccount(t, 'held', record?.version ?? 0, { cachingAgentId: 'agent-1' }, clock.now());
    await seedCache(t, 'held', 4);
    await markCacheCleanup(t, 'held', clock.now());
    await clock.advance(DELAY);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['held', 'waiting']]));
    expect(await cacheCount(t, 'held')).toBe(9);
    const after = await getAccount(t, 'held', { consistent: true });
    await updateAccount(t, 'held', after?.version ?? 0, { cachingAgentId: null }, clock.now());
    await clock.advance(15_000);
    expect(await loopOf(t, clock).pass()).toEqual(new Map([['held', 'done']]));
    expect(await cacheCount(t, 'held')).toBe(0);
  });

  it('runs as a loop on its clock until stopped', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    await syncSource(t, file, [{ name: 'x' }], clock.now());
    await seedCache(t, 'x', 3);
    await syncSource(t, file, [], clock.now());
    const stop = new AbortController();
    const running = loopOf(t, clock, 'replica-1', { intervalMs: 15_000 }).run(stop.signal);
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    await clock.advance(DELAY);
    await vi.waitFor(async () => expect(await cacheCount(t, 'x')).toBe(0));
    stop.abort();
    await running;
    const markers = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.cacheCleanup } }));
    expect(markers.Items).toEqual([]);
  });
});
