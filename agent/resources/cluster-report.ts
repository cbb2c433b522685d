/**
 * What the cache tells about failures beyond one scope: the cluster's reachability as the driver
 * stores it (ages, not times, so the driver's clock need not agree with the agent's), and the
 * periodic log line that sums up the scopes still failing on their own.
 */
import type { ClusterStatus } from '../../shared/protocol/messages.ts';
import type { ClusterReachability } from './cluster-probe.ts';
import type { ScopeState } from './reflector.ts';

/** Longest error text sent: a Status message is short, a proxy's HTML page is not. */
const MAX_ERROR = 1000;

/** Scopes named in one summary line; the rest are counted. */
const NAMED_SCOPES = 10;

export function clusterStatusMessage(r: ClusterReachability, now: number): ClusterStatus {
  const age = (at: number) => Math.max(0, now - at);
  return {
    reachable: r.reachable,
    sinceAgeMs: age(r.since),
    reason: r.reason ?? '',
    error: (r.error ?? '').slice(0, MAX_ERROR),
    lastOutageReason: r.lastOutage?.reason ?? '',
    lastOutageFromAgeMs: r.lastOutage === undefined ? -1 : age(r.lastOutage.from),
    lastOutageUntilAgeMs: r.lastOutage === undefined ? -1 : age(r.lastOutage.until),
  };
}

/** The summary of scopes whose own failure goes on (logged when it began), or undefined when none does. */
export function failingScopesLine(scopes: readonly { id: string; state: ScopeState }[]): { count: number; message: string } | undefined {
  const failing = scopes.filter((s) => s.state.failureLogged === true && s.state.lastError !== undefined);
  if (failing.length === 0) return undefined;
  const named = failing.slice(0, NAMED_SCOPES).map((s) => `${s.id} (${s.state.lastError})`);
  const more = failing.length > NAMED_SCOPES ? `, and ${failing.length - NAMED_SCOPES} more` : '';
  return { count: failing.length, message: `${failing.length} scopes still failing, retrying with backoff: ${named.join('; ')}${more}` };
}
