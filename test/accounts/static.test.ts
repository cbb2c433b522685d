import { describe, expect, it, vi } from 'vitest';
import { getSession } from '../../shared/table/agents/sessions.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();


describe('static accounts of vendor-agent.yml', () => {
  it('appear with source static-agent-config, are held by the agents that announce them with one caching, and go with them', async () => {
    await world.fresh([]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    const edge = { name: 'edge', kubeConfigFile: world.kubeconfig('edge'), namespaces: ['shop'] };
    const r1 = await world.agent('r1', { target, accounts: [edge] });
    await vi.waitFor(async () => expect((await world.account('edge')).agents).toEqual([{ agentId: 'r1', caching: true }]), WAIT);
    const account = await world.account('edge');
    expect(account).toMatchObject({ name: 'edge', source: 'static-agent-config', zoneId: 'vendor-agent_infra', config: { namespaces: ['shop'] } });
    expect(JSON.stringify(account)).not.toContain('.kubeconfig'); // the path stays on the agent
    expect(account.lastAssignmentMsg).toBe(`connected to ${world.kube.url} (Kubernetes v1.30.0)`);
    expect(r1.holder().view('edge')).toMatchObject({ caching: true, settings: { namespaces: ['shop'] } });
    // The session item counts them; their names are in items of their own, not rewritten by each renewal.
    const session = await getSession(world.table, 'vendor-agent_infra', 'r1');
    expect(session).toMatchObject({ staticAccountCount: 1, staticAccounts: ['edge'] });

    // A second replica of the same deployment announces the same account: both hold it, one caches.
    const r2 = await world.agent('r2', { target, accounts: [edge] });
    await vi.waitFor(async () => expect((await world.account('edge')).agents).toEqual([{ agentId: 'r1', caching: true }, { agentId: 'r2', caching: false }]), WAIT);
    expect(r2.holder().view('edge')?.caching).toBe(false);

    // Both go: once the grace is over, nothing defines the account any more.
    await r1.stop();
    await r2.stop();
    await vi.waitFor(async () => expect((await world.call('GET', '/vendor/accounts/edge')).status).toBe(404), WAIT);
  });

  it('a plugin with a lower precedence than 1000 wins over the agent (and the account is then migrated like any driver account); one without precedence does not', async () => {
    await world.fresh([]);
    await syncSource(world.table, { id: 'plugin:low', kind: 'plugin', precedence: 500 }, [{ name: 'won-by-plugin', kubeconfigFile: world.kubeconfig('won-by-plugin') }], Date.now());
    await syncSource(world.table, { id: 'plugin:none', kind: 'plugin' }, [{ name: 'won-by-agent' }], Date.now());
    const driver = await world.driver();
    const agent = await world.agent('a1', {
      target: `127.0.0.1:${driver.port}`,
      accounts: [
        { name: 'won-by-plugin', kubeConfigFile: world.kubeconfig('own-1') },
        { name: 'won-by-agent', kubeConfigFile: world.kubeconfig('own-2') },
      ],
    });
    await vi.waitFor(async () => expect((await world.account('won-by-agent')).agents).toEqual([{ agentId: 'a1', caching: true }]), WAIT);
    expect((await world.account('won-by-agent')).source).toBe('static-agent-config');
    expect(await world.account('won-by-plugin')).toMatchObject({ source: 'driver', agents: [] });
    expect(agent.holder().view('won-by-plugin')).toBeUndefined();

    // The plugin's account is a driver account: it can be migrated, and then goes with the driver's kubeconfig.
    await world.call('POST', '/vendor/accounts', [{ name: 'won-by-plugin' }]);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'won-by-plugin', state: 'ACTIVE' }])).status).toBe(200);
    await vi.waitFor(async () => expect(await world.account('won-by-plugin')).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'a1', caching: true }] }), WAIT);
    expect(world.kube.requests.log().filter((r) => r.path === '/version').length).toBeGreaterThanOrEqual(2);
  });

  it('a static account the agent cannot use is reported with the real message', async () => {
    await world.fresh([]);
    const driver = await world.driver();
    await world.agent('a1', { target: `127.0.0.1:${driver.port}`, accounts: [{ name: 'broken', kubeConfigFile: `${world.dir}/absent.kubeconfig` }] });
    await vi.waitFor(async () => expect((await world.account('broken')).lastAssignmentMsg).toContain('cannot be read: ENOENT'), WAIT);
    expect(await world.account('broken')).toMatchObject({ source: 'static-agent-config', agents: [] });
  });
});
