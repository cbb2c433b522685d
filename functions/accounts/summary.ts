import { ACCOUNT_STATES, SERVED_SOURCES } from '../../shared/accounts/schema.ts';
import { toAccount } from '../../shared/accounts/view.ts';
import { accountsWithPrefix } from '../../shared/table/accounts/filtered.ts';
import { canRead } from '../auth/access.ts';
import type { Caller } from '../auth/caller.ts';
import type { AccountDeps } from './service.ts';
import * as v from 'valibot';

const count = v.pipe(v.number(), v.integer());

/** `GET /vendor/account-summary` (docs/api.md#the-account-summary): the accounts the caller may read, counted. */
export const accountSummarySchema = v.object({
  total: count,
  byState: v.pipe(v.object(Object.fromEntries(ACCOUNT_STATES.map((s) => [s, count])) as Record<(typeof ACCOUNT_STATES)[number], typeof count>), v.description('Accounts in each state.')),
  withoutState: v.pipe(count, v.description('Accounts never registered for migration nor assigned: they have no state.')),
  byZone: v.pipe(v.record(v.string(), count), v.description('Accounts of each zone, by zone id; only zones with accounts.')),
  withoutZone: v.pipe(count, v.description('Accounts pinned to no zone.')),
  bySource: v.pipe(v.object(Object.fromEntries(SERVED_SOURCES.map((s) => [s, count])) as Record<(typeof SERVED_SOURCES)[number], typeof count>), v.description('Accounts of each source.')),
});

export type AccountSummary = v.InferOutput<typeof accountSummarySchema>;

/** Counts every account the caller may read, by state, zone and source, from one read of the account partition. */
export async function accountSummary(deps: Pick<AccountDeps, 'table'>, caller: Caller): Promise<AccountSummary> {
  const summary: AccountSummary = {
    total: 0,
    byState: { INACTIVE: 0, ACTIVE: 0, FAILED: 0 },
    withoutState: 0,
    byZone: {},
    withoutZone: 0,
    bySource: { driver: 0, 'static-agent-config': 0 },
  };
  const zones = new Map<string, number>();
  for (const record of await accountsWithPrefix(deps.table)) {
    if (!canRead(caller, record)) continue;
    const account = toAccount(record);
    summary.total++;
    if (account.state === undefined) summary.withoutState++;
    else summary.byState[account.state]++;
    if (account.zoneId === undefined) summary.withoutZone++;
    else zones.set(account.zoneId, (zones.get(account.zoneId) ?? 0) + 1);
    summary.bySource[account.source]++;
  }
  summary.byZone = Object.fromEntries([...zones].sort(([a], [b]) => (a < b ? -1 : 1)));
  return summary;
}
