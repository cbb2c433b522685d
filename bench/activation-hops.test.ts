import { describe, expect, it } from 'vitest';
import { hopBreakdown, hopRecord } from './activation-hops.ts';

const at = (ms: number) => new Date(ms).toISOString();

describe('the per-hop breakdown of PATCH to ACTIVE', () => {
  it('takes each hop from the previous mark found, per account, and leaves other records out', () => {
    const raw = [
      { msg: 'wake accepted', topic: 'accounts', time: at(1_010) },
      { msg: 'work feed read', accounts: ['a'], time: at(1_015) },
      { msg: 'account item written', account: 'a', answer: false, time: at(1_025) },
      { msg: 'assignment sent', account: 'a', kind: 'assignAccount', time: at(1_026) },
      { msg: 'account item written', account: 'other', answer: false, time: at(1_027) },
      { msg: 'assignment received', account: 'a', time: at(1_027) },
      { msg: 'cluster client ready', account: 'a', time: at(1_030) },
      { msg: 'cluster checked', account: 'a', time: at(1_032) },
      { msg: 'assignment result received', account: 'a', time: at(1_033) },
      { msg: 'account item written', account: 'a', answer: true, time: at(1_037) },
      { msg: 'assignment result', account: 'a', time: at(1_040) },
      { msg: 'agent session opened', time: at(1_020) },
    ];
    const records = raw.map((r) => hopRecord(r)).filter((r) => r !== undefined);
    expect(records).toHaveLength(11);
    const hops = hopBreakdown([{ account: 'a', startedAt: 1_000, endedAt: 1_040 }], records);
    expect(Object.fromEntries(Object.entries(hops).map(([k, v]) => [k, v.p50_ms]))).toEqual({
      api_to_wake: 10,
      wake_to_feed_read: 5,
      feed_read_to_handout_written: 10,
      handout_written_to_sent: 1,
      sent_to_agent: 1,
      agent_client: 3,
      agent_check: 2,
      answer_to_replica: 1,
      answer_written: 4,
      answer_to_log: 3,
    });
  });

  it('takes a wake naming the account as the mark the feed read would have made, and no feed read of it later', () => {
    const records = [
      { msg: 'wake accepted', topic: 'accounts', time: at(1_010) },
      { msg: 'account named by a wake', accounts: ['a'], time: at(1_011) },
      { msg: 'account item written', account: 'a', answer: false, time: at(1_020) },
      { msg: 'work feed read', accounts: ['a'], time: at(1_030) },
      { msg: 'assignment result', account: 'a', time: at(1_040) },
    ]
      .map((r) => hopRecord(r))
      .filter((r) => r !== undefined);
    const hops = hopBreakdown([{ account: 'a', startedAt: 1_000, endedAt: 1_040 }], records);
    expect(hops.wake_to_feed_read?.p50_ms).toBe(1);
    expect(hops.feed_read_to_handout_written?.p50_ms).toBe(9);
    expect(hops.answer_to_log?.p50_ms).toBe(20);
  });

  it('gives a missing mark (no wake) to the next hop', () => {
    const records = [hopRecord({ msg: 'work feed read', accounts: ['a'], time: at(1_200) }), hopRecord({ msg: 'assignment result', account: 'a', time: at(1_300) })].filter((r) => r !== undefined);
    const hops = hopBreakdown([{ account: 'a', startedAt: 1_000, endedAt: 1_300 }], records);
    expect(hops.api_to_wake).toEqual({ n: 0, p50_ms: 0, p99_ms: 0 });
    expect(hops.wake_to_feed_read?.p50_ms).toBe(200);
    expect(hops.answer_to_log?.p50_ms).toBe(100);
  });
});
