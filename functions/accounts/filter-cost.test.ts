import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { followAccountFacets } from '../../shared/table/accounts/facets.ts';
import { RANGE_READ_FACTOR } from '../../shared/table/accounts/listing.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { isAccountPartition } from '../../shared/table/accounts/keys.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { IgnoredPermissionsLog } from '../auth/access.ts';
import type { Caller } from '../auth/caller.ts';
import { listAccounts, type AccountDeps } from './service.ts';
import { accountSummary } from './summary.ts';
import { interceptedTable } from '../../test/support/intercepted-table.ts';

const tables = useTestTables();

/** Counts the account items every read returns (Query and BatchGetItem of the account partition). */
function countingAccountReads(t: TableRef): { table: TableRef; read: () => number } {
  let read = 0;
  const table = interceptedTable(t, async (command, send) => {
    const out = (await send(command)) as { Items?: { pk?: string }[]; Responses?: Record<string, { pk?: string }[]> };
    if (command instanceof QueryCommand) read += (out.Items ?? []).filter((i) => isAccountPartition(i.pk)).length;
    if (command instanceof BatchGetCommand) read += Object.values(out.Responses ?? {}).flat().filter((i) => isAccountPartition(i.pk)).length;
    return out;
  });
  return { table, read: () => read };
}

const manager: Caller = { via: 'admin-token', subject: 'admin-token', roles: new Set(), manager: true, writesOpenAccounts: true };
const N = 200;

/**
 * `N` driver accounts: every fifth ACTIVE in zone-a, every fifth after that FAILED, the rest never
 * registered; and 40 static accounts of an agent in zone-b.
 */
async function world(): Promise<TableRef> {
  const t = await tables.fresh();
  const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(4, '0')}`);
  await syncSource(t, { id: 'driver-config', kind: 'driver-config' }, names.map((name) => ({ name })), 1);
  await putAgentStaticAccounts(t, 'agent-b', 'zone-b', Array.from({ length: 40 }, (_, i) => ({ name: `stat-${String(i).padStart(2, '0')}` })), 1);
  const written: AccountRecord[] = [];
  for (const [i, name] of names.entries()) {
    if (i % 5 > 1) continue;
    const record = (await getAccount(t, name, { consistent: true }))!;
    written.push(await updateAccount(t, name, record.version, { state: i % 5 === 0 ? 'ACTIVE' : 'FAILED', registration: { ...(i % 5 === 0 ? { zoneId: 'zone-a' } : {}), at: 1 } }, 1));
  }
  await followAccountFacets(t, written);
  return t;
}

describe('filtered lists and the summary read a page, not the accounts (docs/api.md#filters)', () => {
  it('serves any page of a filtered list, and its total, reading about the page of account items', async () => {
    const t = await world();
    const deps = (table: TableRef): AccountDeps => ({ table, clock: new ManualClock(1), permissionsLog: new IgnoredPermissionsLog(pino({ enabled: false })) });
    for (const [query, expected] of [
      [{ states: new Set(['ACTIVE'] as const) }, N / 5],
      [{ states: new Set(['FAILED'] as const), sources: new Set(['driver'] as const) }, N / 5],
      [{ zoneId: 'zone-a', states: new Set(['ACTIVE', 'FAILED'] as const) }, N / 5],
      [{ zoneId: 'zone-b' }, 40],
      [{ sources: new Set(['static-agent-config'] as const), namePrefix: 'stat-1' }, 10],
    ] as const) {
      for (const page of [1, 3]) {
        const counting = countingAccountReads(t);
        const limit = 10;
        const res = await listAccounts(deps(counting.table), manager, page, limit, query);
        expect(res.total).toBe(expected);
        expect(res.items).toHaveLength(Math.min(limit, Math.max(0, expected - (page - 1) * limit)));
        // Reading every account would be N + 40 items; a page is at most a range of this many.
        expect(counting.read()).toBeLessThanOrEqual(RANGE_READ_FACTOR * limit);
      }
    }
  }, 180_000);

  it('counts the summary from the index alone, without reading an account item', async () => {
    const t = await world();
    const counting = countingAccountReads(t);
    const summary = await accountSummary({ table: counting.table }, manager);
    expect(summary).toEqual({
      total: N + 40,
      byState: { INACTIVE: 0, ACTIVE: N / 5, FAILED: N / 5 },
      withoutState: N - (2 * N) / 5 + 40,
      byZone: { 'zone-a': N / 5, 'zone-b': 40 },
      withoutZone: N - N / 5,
      bySource: { driver: N, 'static-agent-config': 40 },
    });
    expect(counting.read()).toBe(0);
  }, 180_000);
});
