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

  it('a replica that must take the account off its agent (the zone changed) does so at once, though another replica leads the new hand-out', async () => {
    await world.fresh([{ name: 'prod' }]);
    const one = await world.driver({ replicaId: 'replica-1' });
    const two = await world.driver({ replicaId: 'replica-2' });
    // a1 (zone y) sorts before b1 (zone z): once the account moves to zone y, replica-1 leads.
    const agents = [
      new ProtocolAgent({ target: `127.0.0.1:${one.port}`, agentId: 'a1', zone: 'y', token: AGENT_TOKEN }),
      new ProtocolAgent({ target: `127.0.0.1:${two.port}`, agentId: 'b1', zone: 'z', token: AGENT_TOKEN }),
    ];
    try {
      await vi.waitFor(() => expect(one.sessions().length + two.sessions().length).toBe(2), WAIT);
      expect((await world.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }])).status).toBe(200);
      expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).status).toBe(200);
      await vi.waitFor(async () => expect((await world.record('prod'))?.agents.b1?.ok).toBe(true), WAIT);
      expect((await world.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'y' }])).status).toBe(200);
      // Well before the full reconcile (60 s here) would repair it.
      await vi.waitFor(() => expect(agents[1]!.held('prod')).toBeUndefined(), { timeout: 15_000, interval: 50 });
      await vi.waitFor(async () => expect(Object.keys((await world.record('prod'))?.agents ?? {})).toEqual(['a1']), { timeout: 15_000, interval: 50 });
      expect(agents[0]!.held('prod')).toBeDefined();
    } finally {
      for (const a of agents) a.stop();
    }
  }, 60_000);
});
