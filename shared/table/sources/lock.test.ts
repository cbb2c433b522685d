import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import { faultyTable } from '../../../test/support/store-faults.ts';
import { useTestTables } from '../../../test/support/table.ts';
import { acquireSourceLockParams, releaseSourceLockParams, SOURCE_LOCK_LEASE_MS, SOURCE_LOCK_RENEW_MS, withSourceLock, type SourceLockDeps } from './lock.ts';

describe('source lock params', () => {
  it('takes a free or expired lock, recording the owner session when given', () => {
    const p = acquireSourceLockParams('T', 'agent:a', 'h1', 1000, { owner: 's2' });
    expect(p.Key).toEqual({ pk: 'SOURCELOCK', sk: 'agent:a' });
    expect(p.UpdateExpression).toBe('SET #holder = :holder, #until = :until, #owner = :owner');
    expect(p.ConditionExpression).toBe('(attribute_not_exists(#holder) OR #until < :now OR #holder = :holder)');
    expect(p.ExpressionAttributeValues).toEqual({ ':holder': 'h1', ':until': 1000 + SOURCE_LOCK_LEASE_MS, ':now': 1000, ':owner': 's2' });
  });

  it('takes the lock only while the source belongs to the given session or to none', () => {
    const p = acquireSourceLockParams('T', 'agent:a', 'h1', 5, { ifOwner: 's1' });
    expect(p.ConditionExpression).toBe('(attribute_not_exists(#holder) OR #until < :now OR #holder = :holder) AND (attribute_not_exists(#owner) OR #owner = :ifOwner)');
    expect(p.UpdateExpression).not.toContain('#owner =');
    expect(p.ExpressionAttributeValues?.[':ifOwner']).toBe('s1');
  });

  it('releases only its own hold', () => {
    expect(releaseSourceLockParams('T', 'agent:a', 'h1')).toMatchObject({ ConditionExpression: '#holder = :holder', ExpressionAttributeValues: { ':holder': 'h1' } });
  });
});

describe('source lock against dynalite', () => {
  const tables = useTestTables();

  it('runs the work of one source one at a time', async () => {
    const t = await tables.fresh();
    let inside = 0;
    let overlaps = 0;
    const work = (n: number) => async () => {
      if (++inside > 1) overlaps++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside--;
      return n;
    };
    const runs = await Promise.all([1, 2, 3, 4].map((n) => withSourceLock(t, 'x', {}, work(n))));
    expect(runs.map((r) => r.ran && r.value)).toEqual([1, 2, 3, 4]);
    expect(overlaps).toBe(0);
  });

  it('runs works of different sources side by side', async () => {
    const t = await tables.fresh();
    let yStarted!: () => void;
    const started = new Promise<void>((resolve) => (yStarted = resolve));
    // x holds its lock until y's work has begun: a lock shared between sources would never let it.
    const [x, y] = await Promise.all([
      withSourceLock(t, 'x', {}, async () => started.then(() => 'x')),
      withSourceLock(t, 'y', {}, async () => (yStarted(), 'y')),
    ]);
    expect([x, y]).toEqual([{ ran: true, value: 'x' }, { ran: true, value: 'y' }]);
  });

  it('takes over a lock whose holder died once its lease ran out, and gives up on a live one with a clear error', async () => {
    const t = await tables.fresh();
    let now = 1_000_000;
    const deps: SourceLockDeps = { now: () => now, sleep: async (ms) => void (now += ms) };
    // A holder that took the lock and never came back.
    await t.client.send(new UpdateCommand(acquireSourceLockParams(t.tableName, 'agent:a', 'dead', now)));
    const waited = await withSourceLock(t, 'agent:a', {}, async () => now, deps);
    expect(waited.ran && waited.value).toBeGreaterThan(1_000_000 + SOURCE_LOCK_LEASE_MS);

    // A live holder: its lease, as this waiter judges it, does not run out while the waiter waits.
    await t.client.send(new UpdateCommand(acquireSourceLockParams(t.tableName, 'agent:b', 'live', now + 10 * SOURCE_LOCK_LEASE_MS)));
    const start = now;
    let ran = false;
    await expect(withSourceLock(t, 'agent:b', {}, async () => (ran = true), deps)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('agent:b') });
    expect(ran).toBe(false);
    expect(now - start).toBeGreaterThan(SOURCE_LOCK_LEASE_MS);
  });

  it('keeps the lock through work longer than several leases, and a waiter waits for a holder that renews', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(2_000_000);
    const deps: SourceLockDeps = { now: () => clock.now(), sleep: (ms) => clock.sleep(ms), renewalSleep: (ms, signal) => clock.sleep(ms, signal) };
    let finish!: () => void;
    const longWork = new Promise<void>((resolve) => (finish = resolve));
    const holding = withSourceLock(t, 'driver-config', {}, () => longWork.then(() => 'long'), deps);
    // Until the holder sleeps between renewals, it holds the lock.
    await until(() => clock.pendingSleeps === 1);
    let waiterRan = false;
    let waiterFailure: unknown;
    const waiting = withSourceLock(t, 'driver-config', {}, async () => (waiterRan = true), deps);
    waiting.catch((err: unknown) => (waiterFailure = err));
    // Five leases go by, in steps that let the holder renew and the waiter try again before time moves on.
    const start = clock.now();
    while (clock.now() - start < 5 * SOURCE_LOCK_LEASE_MS) {
      await until(() => clock.pendingSleeps === 2 || waiterFailure !== undefined || waiterRan);
      expect(waiterFailure).toBeUndefined();
      await clock.advance(SOURCE_LOCK_RENEW_MS / 4);
      expect(waiterRan).toBe(false);
    }
    finish();
    expect(await holding).toEqual({ ran: true, value: 'long' });
    while (!waiterRan) {
      await until(() => clock.pendingSleeps >= 1 || waiterRan);
      if (!waiterRan) await clock.advance(1_000);
    }
    expect(await waiting).toEqual({ ran: true, value: true });
  });

  it('skips a sweep of an older session once a newer session announced, and runs it while the session still owns the source', async () => {
    const t = await tables.fresh();
    expect(await withSourceLock(t, 'agent:a', { owner: 's1' }, async () => 'hello s1')).toEqual({ ran: true, value: 'hello s1' });
    expect(await withSourceLock(t, 'agent:a', { ifOwner: 's1' }, async () => 'sweep s1')).toEqual({ ran: true, value: 'sweep s1' });
    await withSourceLock(t, 'agent:a', { owner: 's2' }, async () => 'hello s2');
    let ran = false;
    expect(await withSourceLock(t, 'agent:a', { ifOwner: 's1' }, async () => (ran = true))).toEqual({ ran: false, reason: 'superseded' });
    expect(ran).toBe(false);
    // A source no session announced (written before sessions were recorded) is swept.
    expect((await withSourceLock(t, 'agent:b', { ifOwner: 's9' }, async () => 'swept')).ran).toBe(true);
  });

  it('a take the table applied but whose answer was lost is taken by the retry, not waited out for a lease', async () => {
    const healthy = await tables.fresh();
    const { table, faults } = await faultyTable(healthy);
    try {
      let now = 5_000_000;
      let slept = 0;
      const deps: SourceLockDeps = { now: () => now, sleep: async (ms) => void ((slept += ms), (now += ms)) };
      faults.set({ kind: 'lost-answer' }, { only: ['UpdateItem'], times: 1 });
      expect(await withSourceLock(table, 'agent:a', {}, async () => 'synced', deps)).toEqual({ ran: true, value: 'synced' });
      expect(faults.attempts.filter((a) => a.operation === 'UpdateItem').map((a) => a.fault)).toEqual(['lost-answer', undefined, undefined]);
      expect(slept).toBe(0);
      // Released: another holder takes it at once.
      expect(await withSourceLock(healthy, 'agent:a', {}, async () => 'next', deps)).toEqual({ ran: true, value: 'next' });
      expect(slept).toBe(0);
    } finally {
      await faults.close();
    }
  });

  it('frees the lock when the work fails, and passes the failure on', async () => {
    const t = await tables.fresh();
    await expect(withSourceLock(t, 'agent:a', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    let now = 0;
    const deps: SourceLockDeps = { now: () => now, sleep: async (ms) => void (now += ms) };
    expect(await withSourceLock(t, 'agent:a', {}, async () => now, deps)).toEqual({ ran: true, value: 0 });
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
}
