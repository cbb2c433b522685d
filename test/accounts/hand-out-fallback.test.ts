import { describe, expect, it, vi } from 'vitest';
import { AGENT_TOKEN, useAccountsWorld } from '../support/accounts-world.ts';
import { ProtocolAgent } from '../support/protocol-agent.ts';

const world = useAccountsWorld();
const WAIT = { timeout: 20_000, interval: 50 };

describe('the hand-out lead across replicas (docs/protocol.md#assignment-across-replicas)', () => {
  it('a replica left waiting for a lead that does not act writes its own agent\'s hand-out after its last look', async () => {
    await world.fresh([{ name: 'prod' }]);
    // a1 sorts first, so its replica leads; that replica reads the feed only once a minute.
    const slow = await world.driver({ replicaId: 'replica-1', assignment: { pollIntervalMs: 60_000 } });
    const other = await world.driver({ replicaId: 'replica-2' });
    const agents = [
      new ProtocolAgent({ target: `127.0.0.1:${slow.port}`, agentId: 'a1', zone: 'z', token: AGENT_TOKEN }),
      new ProtocolAgent({ target: `127.0.0.1:${other.port}`, agentId: 'a2', zone: 'z', token: AGENT_TOKEN }),
    ];
    try {
      await vi.waitFor(() => expect(slow.sessions().length + other.sessions().length).toBe(2), WAIT);
      expect((await world.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }])).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).status).toBe(200);
      // Three looks (4, 8 and 16 poll intervals: 700 ms here), then replica-2 hands the account to a2 itself.
      await vi.waitFor(() => expect(agents[1]!.held('prod')).toBeDefined(), { timeout: 20_000, interval: 50 });
      await vi.waitFor(async () => expect((await world.record('prod'))?.agents.a2?.ok).toBe(true), { timeout: 20_000, interval: 50 });
      expect((await world.record('prod'))?.state).toBe('ACTIVE');
      expect(agents[0]!.held('prod')).toBeUndefined();
    } finally {
      for (const a of agents) a.stop();
    }
  }, 60_000);
});
