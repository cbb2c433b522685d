import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestTables } from '../../test/support/table.ts';
import { endSession, liveSessions, liveSessionsParams, putSession, renewSession, type Session } from './sessions.ts';

const session = (agentId: string, zoneId: string, leaseExpiresAt: number, replicaId = 'r1'): Session => ({
  agentId,
  zoneId,
  replicaId,
  connectedAt: 0,
  leaseExpiresAt,
  agentVersion: '1.0.0',
  staticAccounts: ['s1'],
});

describe('session builders', () => {
  it('queries one zone by sort-key prefix and filters on the exact zone and the lease', () => {
    const p = liveSessionsParams('t', 1000, 'zone-a');
    expect(p.KeyConditionExpression).toBe('pk = :pk AND begins_with(sk, :zonePrefix)');
    expect(p.FilterExpression).toBe('leaseExpiresAt > :now AND zoneId = :zone');
    expect(liveSessionsParams('t', 1000).FilterExpression).toBe('leaseExpiresAt > :now');
  });
});

describe('sessions against dynalite', () => {
  const tables = new TestTables();
  beforeAll(() => tables.start());
  afterAll(() => tables.close());

  it('finds live sessions per zone and across zones, judged by the lease', async () => {
    const t = await tables.fresh();
    await putSession(t, session('a1', 'zone', 2000));
    await putSession(t, session('a2', 'zone', 500)); // lease already over at 1000
    await putSession(t, session('b1', 'zone.b', 2000)); // shares the prefix "zone"
    expect((await liveSessions(t, 1000, 'zone')).map((s) => s.agentId)).toEqual(['a1']);
    expect((await liveSessions(t, 1000)).map((s) => s.agentId).sort()).toEqual(['a1', 'b1']);
    expect(await liveSessions(t, 1000, 'nowhere')).toEqual([]);
    expect((await liveSessions(t, 1000, 'zone'))[0]).toEqual(session('a1', 'zone', 2000));
  });

  it('renews and ends only from the replica holding the session', async () => {
    const t = await tables.fresh();
    await putSession(t, session('a1', 'zone', 2000, 'r1'));
    expect(await renewSession(t, 'zone', 'a1', 'r2', 9000)).toBe(false);
    expect(await renewSession(t, 'zone', 'a1', 'r1', 3000)).toBe(true);
    expect((await liveSessions(t, 2500, 'zone')).length).toBe(1);
    // The agent reconnects through replica r2, which takes the session over.
    await putSession(t, session('a1', 'zone', 4000, 'r2'));
    expect(await endSession(t, 'zone', 'a1', 'r1')).toBe(false);
    expect(await endSession(t, 'zone', 'a1', 'r2')).toBe(true);
    expect(await liveSessions(t, 0)).toEqual([]);
    expect(await renewSession(t, 'zone', 'a1', 'r2', 5000)).toBe(false);
  });
});
