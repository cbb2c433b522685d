import type { ClusterStatusRecord } from './model.ts';
import type { ServedClusterStatus } from './schema.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** The stored report of whether the cluster answers, as the account served shows it (docs/api.md#the-account-served). */
export function servedClusterStatus(c: ClusterStatusRecord): ServedClusterStatus {
  const reason = c.reason === 'unreachable' || c.reason === 'unauthorized' ? c.reason : undefined;
  return {
    reachable: c.reachable,
    since: iso(c.since),
    ...(c.reachable || reason === undefined ? {} : { reason }),
    ...(c.reachable || c.error === undefined ? {} : { error: c.error }),
    ...(c.lastOutage === undefined ? {} : { lastOutage: { reason: c.lastOutage.reason, from: iso(c.lastOutage.from), until: iso(c.lastOutage.until) } }),
    reportedBy: c.agentId,
    reportedAt: iso(c.at),
  };
}
