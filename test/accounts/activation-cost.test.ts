import { describe, expect, it, vi } from 'vitest';
import type { TableRef } from '../../shared/table/core/client.ts';
import { PK, PK_PREFIX } from '../../shared/table/core/keys.ts';
import { isAccountPartition } from '../../shared/table/accounts/keys.ts';
import { readHeldAccounts } from '../../shared/table/accounts/held.ts';
import { facetCounts } from '../../shared/table/accounts/facets.ts';
import { AGENT_TOKEN, useAccountsWorld } from '../support/accounts-world.ts';
import { ProtocolAgent } from '../support/protocol-agent.ts';
import { interceptedTable, operationOf } from '../support/intercepted-table.ts';

const world = useAccountsWorld();
const N = 120;
const WAIT = { timeout: 60_000, interval: 50 };

/** A client of the same table that counts every request by DynamoDB operation. */
function countingTable(t: TableRef): { table: TableRef; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const table = interceptedTable(t, (command, send) => {
    const op = operationOf(command);
    counts.set(op, (counts.get(op) ?? 0) + 1);
    const pk = String(command.input.Item?.pk ?? command.input.Key?.pk ?? '');
    const kind = isAccountPartition(pk) ? 'account' : pk === PK.rank ? 'index' : pk.startsWith(PK_PREFIX.held) ? 'held' : undefined;
    if (kind !== undefined) counts.set(`${op}:${kind}`, (counts.get(`${op}:${kind}`) ?? 0) + 1);
    return send(command);
  });
  return { table, counts };
}

describe('activating many accounts in one replica (docs/table.md#the-held-index)', () => {
  it('writes the held and facet indexes and the answers of a PATCH of many in batches, not a round trip per account', async () => {
    const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(3, '0')}`);
    await world.fresh(names.map((name) => ({ name })));
    const { table, counts } = countingTable(world.table);
    const driver = await world.driver({ table });
    const agents = ['a1', 'a2'].map((agentId) => new ProtocolAgent({ target: `127.0.0.1:${driver.port}`, agentId, zone: 'z', token: AGENT_TOKEN }));
    try {
      await vi.waitFor(() => expect(driver.sessions().length).toBe(2), WAIT);
      expect((await world.call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: 'z' })))).status).toBe(200);
      await vi.waitFor(() => expect(driver.sessions().length).toBe(2), WAIT);
      const before = new Map(counts);
      expect((await world.call('PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
      await vi.waitFor(async () => expect(await world.confirmedBy(names, 2)).toHaveLength(N), WAIT);
      // Every rule still holds: each agent's held entries and the facet counts follow the items.
      await vi.waitFor(async () => {
        for (const a of agents) expect((await readHeldAccounts(world.table, a.id)).map((e) => e.name)).toEqual(names);
        expect([...(await facetCounts(world.table)).entries()]).toEqual([[JSON.stringify(['ACTIVE', 'driver', 'z']), N]]);
      }, WAIT);
      const used = (op: string) => (counts.get(op) ?? 0) - (before.get(op) ?? 0);
      // The held entries go in BatchWriteItem; no entry is written on its own.
      expect(used('Put:held') + used('Delete:held')).toBe(0);
      // The item writes a rule needs (the hand-out with the caching election, the two answers: each
      // conditional on the item's version) and a few lost races; the sessions' lease renewals, which
      // the time the run takes drives, are not counted.
      expect(used('Update:account')).toBeLessThanOrEqual(3.5 * N);
      // The index rounds (held entries in batches, the consistent read backs, the facet index's chunk
      // and directory writes), shared by the settles that run together: one round each per account
      // would be more than five times this.
      expect(used('BatchWrite') + used('BatchGet') + used('Update:index')).toBeLessThanOrEqual(2 * N);
    } finally {
      for (const a of agents) a.stop();
    }
  }, 120_000);
});
