import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();


const agentIds = (account: Record<string, unknown>) => (account.agents as { agentId: string }[]).map((a) => a.agentId);
const cachingAgents = (account: Record<string, unknown>) => (account.agents as { agentId: string; caching: boolean }[]).filter((a) => a.caching);

describe('which agents get an account', () => {
  it('goes to the agents of its zone only; without a zone to every agent, with exactly one caching', async () => {
    await world.fresh([{ name: 'pinned' }, { name: 'anywhere' }]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    const a1 = await world.agent('a1', { target, namespace: 'blue' });
    const a2 = await world.agent('a2', { target, namespace: 'blue' });
    const b1 = await world.agent('b1', { target, namespace: 'green' });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(3), WAIT);
    const kubeconfig = world.kubeconfig('shared');
    await world.call('POST', '/vendor/accounts', [
      { name: 'pinned', zoneId: 'vendor-agent_blue', kubeconfigFile: kubeconfig },
      { name: 'anywhere', kubeconfigFile: kubeconfig },
    ]);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'pinned', state: 'ACTIVE' }, { name: 'anywhere', state: 'ACTIVE' }])).status).toBe(200);

    await vi.waitFor(async () => expect(agentIds(await world.account('pinned'))).toEqual(['a1', 'a2']), WAIT);
    await vi.waitFor(async () => expect(agentIds(await world.account('anywhere'))).toEqual(['a1', 'a2', 'b1']), WAIT);
    for (const name of ['pinned', 'anywhere']) {
      const account = await world.account(name);
      expect(cachingAgents(account)).toHaveLength(1);
      expect((await world.record(name))?.cachingAgentId).toBe(cachingAgents(account)[0]?.agentId);
    }
    expect(b1.holder().view('pinned')).toBeUndefined();
    expect([a1, a2].map((a) => a.holder().view('pinned')?.caching).sort()).toEqual([false, true]);
  });

  it('PATCH needs a live agent in the zone (409), and a new agent joining the zone receives its active accounts', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    await world.agent('green-1', { target, namespace: 'green' });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'vendor-agent_blue', kubeconfigFile: world.kubeconfig('prod') }]);
    const refused = await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    expect(refused.status).toBe(409);

    const blue1 = await world.agent('blue-1', { target, namespace: 'blue' });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(2), WAIT);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).status).toBe(200);
    await vi.waitFor(async () => expect(agentIds(await world.account('prod'))).toEqual(['blue-1']), WAIT);

    const blue2 = await world.agent('blue-2', { target, namespace: 'blue' });
    await vi.waitFor(async () => expect(agentIds(await world.account('prod'))).toEqual(['blue-1', 'blue-2']), WAIT);
    expect(blue2.holder().view('prod')).toMatchObject({ caching: false });
    expect(blue1.holder().view('prod')).toMatchObject({ caching: true });
  });

  it('DELETE takes the account off its agents', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const agent = await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.call('POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: world.kubeconfig('prod') }]);
    await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    await vi.waitFor(() => expect(agent.holder().view('prod')).toBeDefined(), WAIT);

    expect((await world.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    await vi.waitFor(() => expect(agent.holder().view('prod')).toBeUndefined(), WAIT);
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents).toEqual({}), WAIT);
    const account = await world.account('prod');
    expect(account.agents).toEqual([]);
    expect(account.state).toBeUndefined();
    expect((await world.record('prod'))?.cachingAgentId).toBeUndefined();
    expect(agent.logs().some((l) => l['account'] === 'prod' && l['msg'] === 'account no longer held: removed by the driver')).toBe(true);
  });
});
