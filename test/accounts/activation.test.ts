import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();


describe('activation end to end', () => {
  it('POST, PATCH: the agent of the zone connects to the cluster, confirms, and the account is ACTIVE with it caching', async () => {
    await world.fresh([{ name: 'prod', context: 'test' }]);
    const driver = await world.driver();
    const agent = await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra' });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);

    const kubeconfig = world.kubeconfig('prod');
    expect((await world.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'vendor-agent_infra', kubeconfigFile: kubeconfig }])).status).toBe(200);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }])).status).toBe(200);

    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);
    const account = await world.account('prod');
    expect(account).toMatchObject({ state: 'ACTIVE', zoneId: 'vendor-agent_infra', source: 'driver' });
    expect(account.lastAssignmentMsg).toBe(`connected to ${world.kube.url} (Kubernetes v1.30.0)`);
    const record = await world.record('prod');
    expect(record).toMatchObject({ cachingAgentId: 'agent-a', cachingEpoch: 1 });
    // The agent really asked the cluster, with the kubeconfig's token.
    expect(world.kube.requests.log().some((r) => r.path === '/version' && r.user === 'agent')).toBe(true);
    expect(agent.holder().view('prod')).toMatchObject({ name: 'prod', caching: true, cachingEpoch: 1, generation: record?.generation });
    expect(await agent.running.ctx.metrics.registry.getSingleMetricAsString('vendor_agent_accounts')).toContain('vendor_agent_accounts{state="ACTIVE"} 1');
  });

  it('a kubeconfig that cannot be used gives FAILED with a message that tells nothing of the agent\'s files (the reason is in its log), and no secret', async () => {
    await world.fresh([{ name: 'missing' }, { name: 'refused' }]);
    const driver = await world.driver();
    const agent = await world.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    const wrongToken = 'not-the-cluster-token-0000000000';
    await world.call('POST', '/vendor/accounts', [
      { name: 'missing', kubeconfigFile: `${world.dir}/nowhere.kubeconfig` },
      { name: 'refused', kubeconfigFile: world.kubeconfig('refused', { token: wrongToken }) },
    ]);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'missing', state: 'ACTIVE' }, { name: 'refused', state: 'ACTIVE' }])).status).toBe(200);

    await vi.waitFor(async () => expect((await world.account('missing')).state).toBe('FAILED'), WAIT);
    expect(await world.account('missing')).toMatchObject({
      agents: [],
      lastAssignmentMsg: "the kubeconfig reference is not allowed or not usable on agent agent-a; see the agent's log",
    });
    expect(agent.logs().find((l) => l['account'] === 'missing' && String(l['msg']).startsWith('the kubeconfig of an assigned account cannot be used'))).toMatchObject({
      level: 'warn',
      kubeconfigRef: `${world.dir}/nowhere.kubeconfig`,
      msg: `the kubeconfig of an assigned account cannot be used: kubeconfig ${world.dir}/nowhere.kubeconfig cannot be resolved: ENOENT`,
    });
    await vi.waitFor(async () => expect((await world.account('refused')).state).toBe('FAILED'), WAIT);
    const refused = await world.account('refused');
    expect(refused.lastAssignmentMsg).toMatch(/^GET \/version on the cluster of account refused: 401 /);
    expect(JSON.stringify(refused)).not.toContain(wrongToken);
    expect(world.driverLogs.text()).not.toContain(wrongToken);
    expect(await agent.running.ctx.metrics.registry.getSingleMetricAsString('vendor_agent_accounts')).toContain('vendor_agent_accounts{state="FAILED"} 2');
  });

  it('PATCH again after fixing the kubeconfig: FAILED becomes ACTIVE', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.call('POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: world.kubeconfig('bad', { token: 'wrong-token-00000000000000' }) }]);
    await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
    await vi.waitFor(async () => expect((await world.account('prod')).state).toBe('FAILED'), WAIT);
    expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE', kubeconfigFile: world.kubeconfig('good') }])).status).toBe(200);
    await vi.waitFor(async () => expect(await world.account('prod')).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'agent-a', caching: true }] }), WAIT);
  });
});
