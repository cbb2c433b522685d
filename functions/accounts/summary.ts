import { facetCounts, parseFacetTag } from '../../shared/table/accounts/facets.ts';
import type { Caller } from '../auth/caller.ts';
import { facetsOf, hiddenNames, type AccountDeps } from './service.ts';
import type { AccountSummary } from '../../shared/answers/account-summary.ts';

/**
 * Counts every account the caller may read, by state, zone and source, from the facet index's
 * directory (its counts by tag): one small read, not the accounts. A caller some accounts are hidden
 * from also reads the access index and each hidden account, whose counts are taken off.
 */
export async function accountSummary(deps: Pick<AccountDeps, 'table'>, caller: Caller): Promise<AccountSummary> {
  const [counts, hidden] = await Promise.all([facetCounts(deps.table), hiddenNames(deps, caller)]);
  for (const tag of (await facetsOf(deps, hidden)).values()) {
    if ((counts.get(tag) ?? 0) > 0) counts.set(tag, (counts.get(tag) as number) - 1);
  }
  const summary: AccountSummary = {
    total: 0,
    byState: { INACTIVE: 0, ACTIVE: 0, FAILED: 0 },
    withoutState: 0,
    byZone: {},
    withoutZone: 0,
    bySource: { driver: 0, 'static-agent-config': 0 },
  };
  const zones = new Map<string, number>();
  for (const [tag, n] of counts) {
    if (n === 0) continue;
    const facet = parseFacetTag(tag);
    summary.total += n;
    if (facet.state === undefined) summary.withoutState += n;
    else summary.byState[facet.state] += n;
    if (facet.zoneId === undefined) summary.withoutZone += n;
    else zones.set(facet.zoneId, (zones.get(facet.zoneId) ?? 0) + n);
    summary.bySource[facet.source] += n;
  }
  summary.byZone = Object.fromEntries([...zones].sort(([a], [b]) => (a < b ? -1 : 1)));
  return summary;
}
