import { describe, expect, it } from 'vitest';
import type { ClusterStatusRecord } from '../../shared/accounts/model.ts';
import type { CacheHealthRecord, KindHealthRecord } from '../../shared/table/resources/health.ts';
import { REPORT_REFRESH_MS, sameClusterStatus, sameHealth, worthStoring } from './report-refresh.ts';

const kind = (over: Partial<KindHealthRecord> = {}): KindHealthRecord => ({ group: 'apps', kind: 'Deployment', scopes: 2, watching: 2, objects: 40, lastEventAt: 1_000, relists: 1, expired: 0, ...over });
const health = (kinds: KindHealthRecord[], at = 10_000, over: Partial<CacheHealthRecord> = {}): CacheHealthRecord => ({ agentId: 'agent-1', cachingEpoch: 3, at, kinds, ...over });
const status = (over: Partial<ClusterStatusRecord> = {}): ClusterStatusRecord => ({ reachable: true, since: 5_000, agentId: 'agent-1', at: 10_000, ...over });

describe('whether a health report says something new', () => {
  it('is the same when only its time and its kinds\' last events moved, or an error time by the stream\'s delay', () => {
    const stored = health([kind(), kind({ kind: 'ConfigMap', group: '', lastError: 'forbidden', lastErrorAt: 4_000 })]);
    const next = health([kind({ lastEventAt: 19_500 }), kind({ kind: 'ConfigMap', group: '', lastError: 'forbidden', lastErrorAt: 5_900 })], 20_000);
    expect(sameHealth(stored, next)).toBe(true);
  });

  it('differs on any count, an error, an error time that moved, a first event, a kind more or less, another agent or epoch', () => {
    const stored = health([kind(), kind({ kind: 'Secret', group: '', lastEventAt: undefined })]);
    const changed: CacheHealthRecord[] = [
      health([kind({ objects: 41 }), stored.kinds[1]!]),
      health([kind({ watching: 1 }), stored.kinds[1]!]),
      health([kind({ scopes: 3 }), stored.kinds[1]!]),
      health([kind({ relists: 2 }), stored.kinds[1]!]),
      health([kind({ expired: 1 }), stored.kinds[1]!]),
      health([kind({ lastError: 'connection refused', lastErrorAt: 9_000 }), stored.kinds[1]!]),
      health([kind({ lastErrorAt: 9_000 }), stored.kinds[1]!]),
      health([kind(), kind({ kind: 'Secret', group: '', lastEventAt: 9_999 })]),
      health([kind()]),
      health([...stored.kinds, kind({ kind: 'Job', group: 'batch' })]),
      health(stored.kinds, 10_000, { agentId: 'agent-2' }),
      health(stored.kinds, 10_000, { cachingEpoch: 4 }),
    ];
    for (const next of changed) expect(sameHealth(stored, next), JSON.stringify(next)).toBe(false);
    // An error time past the stream's delay: the kind failed again.
    const failing = health([kind({ lastError: 'forbidden', lastErrorAt: 4_000 })]);
    expect(sameHealth(failing, health([kind({ lastError: 'forbidden', lastErrorAt: 6_001 })]))).toBe(false);
  });
});

describe('whether a cluster status says something new', () => {
  it('is the same when only its time moved, and its start and last outage by the stream\'s delay', () => {
    const outage = { reason: 'unreachable', from: 1_000, until: 2_000 };
    expect(sameClusterStatus(status({ lastOutage: outage }), status({ at: 70_000, since: 6_500, lastOutage: { ...outage, from: 2_500, until: 500 } }))).toBe(true);
  });

  it('differs on reachability, reason, error, a start that moved, another outage or agent', () => {
    const stored = status({ lastOutage: { reason: 'unreachable', from: 1_000, until: 2_000 } });
    const changed = [
      status({ ...stored, reachable: false, reason: 'unreachable', error: 'connect ECONNREFUSED' }),
      status({ ...stored, reason: 'unauthorized' }),
      status({ ...stored, error: 'x' }),
      status({ ...stored, since: 9_000 }),
      status({ ...stored, lastOutage: undefined }),
      status({ ...stored, lastOutage: { reason: 'unauthorized', from: 1_000, until: 2_000 } }),
      status({ ...stored, lastOutage: { reason: 'unreachable', from: 1_000, until: 4_500 } }),
      status({ ...stored, agentId: 'agent-2' }),
    ];
    for (const next of changed) expect(sameClusterStatus(stored, next), JSON.stringify(next)).toBe(false);
  });
});

describe('worthStoring', () => {
  it('stores the first report, a changed one at once, and one that says nothing new once the stored one is old enough', () => {
    const same = () => true;
    const differ = () => false;
    expect(worthStoring(undefined, { at: 0 }, same, REPORT_REFRESH_MS)).toBe(true);
    expect(worthStoring({ at: 0 }, { at: 10 }, differ, REPORT_REFRESH_MS)).toBe(true);
    expect(worthStoring({ at: 0 }, { at: REPORT_REFRESH_MS - 1 }, same, REPORT_REFRESH_MS)).toBe(false);
    expect(worthStoring({ at: 0 }, { at: REPORT_REFRESH_MS }, same, REPORT_REFRESH_MS)).toBe(true);
  });
});
