import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

interface AgentView {
  agentId: string;
  zoneId: string;
  identity?: string;
  version: string;
  replicaId: string;
  connectedAt: string;
  lastHeartbeatAt: string;
  accounts: { name: string; caching: boolean }[];
  caching: number;
}

const agents = async (query = '') => (await world.call('GET', `/vendor/agents${query}`)).json.items as AgentView[];

describe('GET /vendor/agents with a real driver and agents', () => {
  it('serves each live agent as the driver recorded it: version, replica, heartbeats, the accounts it holds; gone once it leaves', async () => {
    await world.fresh([]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    const edge = { name: 'edge', kubeConfigFile: world.kubeconfig('edge') };
    const r1 = await world.agent('r1', { target, accounts: [edge] });
    await world.agent('r2', { target, accounts: [edge] });
    await world.agent('r3', { target, deployment: 'other', namespace: 'ns' });
    await vi.waitFor(async () => expect(((await world.account('edge')).agents as { caching: boolean }[]).filter((a) => a.caching).length).toBe(1), WAIT);
    await vi.waitFor(async () => expect((await world.account('edge')).agents).toHaveLength(2), WAIT);
    const holders = (await world.account('edge')).agents as { agentId: string; caching: boolean }[];
    const caching = (id: string) => holders.find((h) => h.agentId === id)?.caching as boolean;

    const first = (await agents()).find((a) => a.agentId === 'r1') as AgentView;
    expect(first).toMatchObject({ zoneId: 'vendor-agent_infra', identity: 'fleet', accounts: [{ name: 'edge', caching: caching('r1') }], caching: caching('r1') ? 1 : 0 });
    expect(first.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(first.replicaId.length).toBeGreaterThan(0);
    // Renewed on the agent's heartbeats (every 200 ms here), so the last one moves on.
    await vi.waitFor(async () => {
      const now = (await world.call('GET', '/vendor/agents/r1')).json as unknown as AgentView;
      expect(Date.parse(now.lastHeartbeatAt)).toBeGreaterThan(Date.parse(first.lastHeartbeatAt));
      expect(Date.parse(now.lastHeartbeatAt)).toBeGreaterThan(Date.parse(now.connectedAt));
    }, WAIT);
    expect((await agents('?zoneId=other_ns')).map((a) => ({ agentId: a.agentId, accounts: a.accounts }))).toEqual([{ agentId: 'r3', accounts: [] }]);

    await r1.stop();
    await vi.waitFor(async () => expect((await world.call('GET', '/vendor/agents/r1')).status).toBe(404), WAIT);
    expect((await agents()).map((a) => a.agentId)).toEqual(['r3', 'r2']);
  });
});
