import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import {
  allSessions,
  deleteSession,
  endSession,
  getSession,
  goneSince,
  liveSessions,
  liveSessionsParams,
  putSession,
  renewSession,
  staticAccountsOf,
  type Session,
} from './sessions.ts';

const session = (agentId: string, zoneId: string, leaseExpiresAt: number, sessionId = 's-1'): Session => ({
  agentId,
  zoneId,
  replicaId: 'r1',
  sessionId,
  connectedAt: 0,
  leaseExpiresAt,
  agentVersion: '1.0.0',
  staticAccountCount: 1,
});

describe('session builders', () => {
  it('queries one zone by sort-key prefix and filters on the exact zone and the lease', () => {
    const p = liveSessionsParams('t', 1000, 'zone-a');
    expect(p.KeyConditionExpression).toBe('pk = :pk AND begins_with(sk, :zonePrefix)');
    expect(p.FilterExpression).toBe('leaseExpiresAt > :now AND zoneId = :zone');
    expect(liveSessionsParams('t', 1000).FilterExpression).toBe('leaseExpiresAt > :now');
  });

  it('counts the static accounts of an item as written now, and of one written with their names before', () => {
    expect(staticAccountsOf({ staticAccountCount: 3 })).toBe(3);
    expect(staticAccountsOf({ staticAccounts: ['a', 'b'] })).toBe(2);
    expect(staticAccountsOf({})).toBe(0);
  });
});

describe('sessions against dynalite', () => {
  const tables = useTestTables();

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

  it('renews and ends only the stream that holds the session, and keeps an ended session for resuming', async () => {
    const t = await tables.fresh();
    await putSession(t, session('a1', 'zone', 2000, 'stream-1'));
    expect(await renewSession(t, 'zone', 'a1', 'stream-0', 9000, 4)).toBe(false);
    expect(await renewSession(t, 'zone', 'a1', 'stream-1', 3000, 4, 1800)).toBe(true);
    expect((await liveSessions(t, 2500, 'zone'))[0]).toMatchObject({ renewedAt: 1800, leaseExpiresAt: 3000 });
    // The agent reconnects (through any replica): the new stream takes the session over.
    await putSession(t, session('a1', 'zone', 4000, 'stream-2'));
    expect(await endSession(t, 'zone', 'a1', 'stream-1', 3500, 'gone', 9)).toBe(false);
    expect(await endSession(t, 'zone', 'a1', 'stream-2', 3500, 'agent closed the stream', 7)).toBe(true);
    expect(await liveSessions(t, 3500)).toEqual([]);
    expect(await renewSession(t, 'zone', 'a1', 'stream-2', 5000)).toBe(false);
    const ended = await getSession(t, 'zone', 'a1');
    expect(ended).toMatchObject({ sessionId: 'stream-2', endedAt: 3500, leaseExpiresAt: 3500, endReason: 'agent closed the stream', lastProcessedSeq: 7 });
    expect(goneSince(ended as Session, 3600)).toBe(3500);
    expect(await endSession(t, 'zone', 'a1', 'stream-2', 3600, 'twice')).toBe(false);
  });

  it('tells since when an agent is gone, from the end or from the lease', () => {
    expect(goneSince(session('a', 'z', 2000), 1000)).toBeUndefined();
    expect(goneSince(session('a', 'z', 2000), 2500)).toBe(2000);
    expect(goneSince({ ...session('a', 'z', 1500), endedAt: 1500 }, 1000)).toBe(1500);
  });

  it('deletes an old session only while it is over and still the same stream', async () => {
    const t = await tables.fresh();
    await putSession(t, session('a1', 'zone', 2000, 'stream-1'));
    const item = (await allSessions(t))[0] as Session;
    expect(await deleteSession(t, item, 1000)).toBe(false); // still live
    await putSession(t, session('a1', 'zone', 2000, 'stream-2'));
    expect(await deleteSession(t, item, 3000)).toBe(false); // replaced by a newer stream
    expect(await deleteSession(t, { ...item, sessionId: 'stream-2' }, 3000)).toBe(true);
    expect(await allSessions(t)).toEqual([]);
  });
});
