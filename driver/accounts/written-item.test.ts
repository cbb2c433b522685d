import { describe, expect, it, vi } from 'vitest';
import type { TableRef } from '../../shared/table/core/client.ts';
import { isAccountPartition } from '../../shared/table/accounts/keys.ts';
import { readHeldAccounts } from '../../shared/table/accounts/held.ts';
import { AGENT_TOKEN, useAccountsWorld } from '../../test/support/accounts-world.ts';
import { ProtocolAgent } from '../../test/support/protocol-agent.ts';
import { interceptedTable, operationOf } from '../../test/support/intercepted-table.ts';

const world = useAccountsWorld();
const N = 12;
const WAIT = { timeout: 30_000, interval: 50 };

/** A client of the same table that keeps every account UpdateItem the driver sends. */
function recordingTable(t: TableRef): { table: TableRef; updates: { condition: string; returned: unknown }[] } {
  const updates: { condition: string; returned: unknown }[] = [];
  const table = interceptedTable(t, (command, send) => {
    if (operationOf(command) === 'Update' && isAccountPartition(command.input.Key?.pk)) {
      updates.push({ condition: String(command.input.ConditionExpression ?? ''), returned: command.input.ReturnValues });
    }
    return send(command);
  });
  return { table, updates };
}

describe("the driver's account writes (docs/table.md#generic-conditional-update)", () => {
  it('ask the table for the item only for a confirmation, and the held index followed from the items it knew holds', async () => {
    const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(2, '0')}`);
    await world.fresh(names.map((name) => ({ name })));
    const { table, updates } = recordingTable(world.table);
    const driver = await world.driver({ table });
    const agents = ['a1', 'a2'].map((agentId) => new ProtocolAgent({ target: `127.0.0.1:${driver.port}`, agentId, zone: 'z', token: AGENT_TOKEN }));
    try {
      await vi.waitFor(() => expect(driver.sessions().length).toBe(2), WAIT);
      expect((await world.call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: 'z' })))).status).toBe(200);
      expect((await world.call('PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
      await vi.waitFor(async () => expect(await world.confirmedBy(names, 2)).toHaveLength(N), WAIT);
      // The held index is followed from the item each write left, as the driver knew it.
      await vi.waitFor(async () => {
        for (const a of agents) expect((await readHeldAccounts(world.table, a.id)).map((e) => e.name)).toEqual(names);
      }, WAIT);
      const versioned = updates.filter((u) => u.condition === 'version = :expected');
      const confirmations = updates.filter((u) => u.condition.startsWith('generation = :generation'));
      // The hand-outs with the caching election: one per account, each conditional on the version.
      expect(versioned.length).toBeGreaterThanOrEqual(N);
      expect(versioned.every((u) => u.returned === undefined)).toBe(true);
      expect(confirmations.length).toBeGreaterThanOrEqual(2 * N);
      expect(confirmations.every((u) => u.returned === 'ALL_NEW')).toBe(true);
    } finally {
      for (const a of agents) a.stop();
    }
  }, 120_000);
});
