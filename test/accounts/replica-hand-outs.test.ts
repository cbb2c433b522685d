import { describe, expect, it, vi } from 'vitest';
import type { TableRef } from '../../shared/table/core/client.ts';
import { isAccountPartition } from '../../shared/table/accounts/keys.ts';
import { AGENT_TOKEN, useAccountsWorld } from '../support/accounts-world.ts';
import { ProtocolAgent } from '../support/protocol-agent.ts';
import { interceptedTable, operationOf } from '../support/intercepted-table.ts';

const world = useAccountsWorld();
const N = 60;
const WAIT = { timeout: 60_000, interval: 50 };

/** A client of the same table that counts the account item's UpdateItems, and those refused by their condition. */
function countingItemWrites(t: TableRef): { table: TableRef; counts: { written: number; refused: number } } {
  const counts = { written: 0, refused: 0 };
  const table = interceptedTable(t, async (command, send) => {
    const item = operationOf(command) === 'Update' && isAccountPartition(command.input.Key?.pk);
    if (item) counts.written++;
    try {
      return await send(command);
    } catch (e) {
      if (item && (e as { name?: string }).name === 'ConditionalCheckFailedException') counts.refused++;
      throw e;
    }
  });
  return { table, counts };
}

describe('activating many accounts whose agents are on two replicas (docs/protocol.md#assignment-across-replicas)', () => {
  it('one replica writes each hand-out, for the agents of both: no item write is refused by a race between the replicas', async () => {
    const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(3, '0')}`);
    await world.fresh(names.map((name) => ({ name })));
    const { table, counts } = countingItemWrites(world.table);
    const one = await world.driver({ table, replicaId: 'replica-1' });
    const two = await world.driver({ table, replicaId: 'replica-2' });
    const agents = [
      new ProtocolAgent({ target: `127.0.0.1:${one.port}`, agentId: 'a1', zone: 'z', token: AGENT_TOKEN }),
      new ProtocolAgent({ target: `127.0.0.1:${two.port}`, agentId: 'a2', zone: 'z', token: AGENT_TOKEN }),
    ];
    try {
      await vi.waitFor(() => expect(one.sessions().length + two.sessions().length).toBe(2), WAIT);
      expect((await world.call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: 'z' })))).status).toBe(200);
      // Each replica sees the other's agent live (its session item) before the accounts are activated.
      await new Promise((r) => setTimeout(r, 300));
      const before = { ...counts };
      expect((await world.call('PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
      await vi.waitFor(async () => {
        const done = await world.confirmedBy(names, 2);
        expect(done).toHaveLength(N);
        // Every rule still holds: one caching agent per account, both agents hold it.
        for (const r of done) expect(Object.values(r.agents).filter((e) => e.caching).map((e) => e.agentId)).toEqual([r.cachingAgentId]);
      }, WAIT);
      const written = counts.written - before.written;
      const refused = counts.refused - before.refused;
      // The writes the rules need: the hand-out to both agents with the caching election, then each
      // agent's answer (each conditional on the item's version), a few lost races at most. When every
      // replica wrote its own agent's entry and an election, about two in three accounts lost one.
      expect(refused).toBeLessThanOrEqual(N / 10);
      expect(written).toBeLessThanOrEqual(3 * N + N / 10);
      // Both agents were told, each by its own replica.
      for (const a of agents) expect(names.every((n) => a.held(n) !== undefined)).toBe(true);
    } finally {
      for (const a of agents) a.stop();
    }
  }, 120_000);
});
