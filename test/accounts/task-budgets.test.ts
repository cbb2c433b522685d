/**
 * Task budgets in the whole flow, with a real driver and real agents: the tasks of an account stop
 * when it is unregistered, and every task stops when the connection to the driver stays lost for
 * the lease, and starts again when it returns, resuming its watches instead of listing again.
 */
import { describe, expect, it, vi } from 'vitest';
import { driverLink } from '../../agent/connection/link.ts';
import { cacheStateReport, cacheStateSource } from '../../agent/observability/cache-state.ts';
import { acquireTask } from '../../agent/tasks/acquire.ts';
import { listsOf } from '../resource-cache-harness.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

const configMap = (name: string, namespace = 'shop') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: '1' } });

async function cachedConfigMaps(namespace = 'shop'): Promise<string[]> {
  const page = await world.call('GET', `/vendor/accounts/prod/resources?kind=configmap&namespace=${namespace}`);
  expect(page.status).toBe(200);
  return (page.json.items as { name: string }[]).map((i) => i.name).sort();
}

const watches = () => world.kube.requests.inFlight({ verb: 'watch' });

describe('task budgets in the whole flow', () => {
  it('when the connection to the driver stays lost for the lease every task stops; when it is back the watches resume without a list', async () => {
    world.kube.store.ensureNamespace('shop');
    for (const name of ['a', 'b']) world.kube.store.upsert(configMap(name));
    await world.fresh([{ name: 'prod' }]);
    // The driver keeps what the agent holds through the outage; the agent's grace is the 1.5 s lease.
    const driver = await world.driver({ sessions: { heartbeatIntervalMs: 200, leaseMs: 1_500 }, assignment: { handoverGraceMs: 60_000 } });
    // The agent dials again only after 3.2 to 4.8 s: longer than the lease.
    const agent = await world.agent('agent-1', { target: `127.0.0.1:${driver.port}`, reconnectTimeoutMs: 4_000 });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect(await cachedConfigMaps()).toEqual(['a', 'b']), WAIT);
    await vi.waitFor(() => expect(agent.holder().cacheState()[0]?.scopes.every((s) => s.state.watching)).toBe(true), WAIT);
    const open = watches();
    expect(open).toBeGreaterThan(5);
    const lists = listsOf(world.kube);
    // Everything sent is taken by the driver, progress included (a batch sent again on a new stream
    // keeps its changes but not its progress, and its scope would be listed: docs/cache.md#resume).
    expect(await driverLink(agent.running.ctx)!.connection.flush(10_000)).toBe(true);

    driver.sessions()[0]!.end(new Error('network trouble'));
    await vi.waitFor(() => expect(agent.holder().suspended).toBe(true), WAIT);
    // Every watch of the account is closed: the agent loads the cluster no more.
    await vi.waitFor(() => expect(watches()).toBe(0), WAIT);
    expect(agent.holder().cacheState()).toEqual([{ account: 'prod', caching: true, suspended: true, scopes: [] }]);
    const { ctx } = agent.running;
    expect(cacheStateReport(cacheStateSource(ctx), ctx.budget, ctx.config().tasks, Date.now())).toMatchObject({
      tasksStopped: true,
      accounts: [{ account: 'prod', tasksStopped: true, scopes: [] }],
    });
    expect(agent.holder().view('prod')).toBeDefined();
    expect(agent.logs().some((l) => String(l.msg).startsWith('no stream to the driver for the whole grace'))).toBe(true);
    world.kube.store.upsert(configMap('c'));

    // Back: the cache starts again from the driver's progress, watch by watch, and lists nothing.
    await vi.waitFor(() => expect(agent.holder().suspended).toBe(false), WAIT);
    await vi.waitFor(() => expect(watches()).toBe(open), WAIT);
    await vi.waitFor(async () => expect(await cachedConfigMaps()).toEqual(['a', 'b', 'c']), WAIT);
    expect(listsOf(world.kube)).toBe(lists);
    expect(agent.logs().some((l) => l.msg === 'connected to the driver again: the tasks start again')).toBe(true);
  });

  it('a reconnect within the lease changes nothing: the cache runs on through it', async () => {
    world.kube.store.ensureNamespace('store');
    world.kube.store.upsert(configMap('a', 'store'));
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver({ sessions: { heartbeatIntervalMs: 200, leaseMs: 5_000 }, assignment: { handoverGraceMs: 60_000 } });
    const agent = await world.agent('agent-2', { target: `127.0.0.1:${driver.port}`, reconnectTimeoutMs: 50 });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(() => expect(agent.holder().cacheState()[0]?.scopes.every((s) => s.state.watching)).toBe(true), WAIT);
    const said = (msg: string) => agent.logs().filter((l) => l.msg === msg).length;
    const started = said('caching the account');
    const session = driver.sessions()[0]!;
    session.end(new Error('network trouble'));
    await vi.waitFor(() => expect(driver.sessions().filter((s) => s !== session)).toHaveLength(1), WAIT);
    world.kube.store.upsert(configMap('b', 'store'));
    await vi.waitFor(async () => expect(await cachedConfigMaps('store')).toEqual(['a', 'b']), WAIT);
    expect(agent.holder().suspended).toBe(false);
    // The cache was never stopped nor started again.
    expect(said('caching the account')).toBe(started);
    expect(agent.logs().some((l) => String(l.msg).startsWith('no stream to the driver for the whole grace'))).toBe(false);
  });

  it('connecting the cluster of an account is an account task: it waits while the budget is used up', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const agent = await world.agent('agent-3', { target: `127.0.0.1:${driver.port}`, tasks: { totalBudget: 1 } });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    const budget = agent.running.ctx.budget;
    const release = await acquireTask(budget, { account: 'other', kind: 'informer', name: 'held' });
    const versions = () => world.kube.requests.log().filter((r) => r.path === '/version').length;
    const before = versions();
    await world.activate('prod');
    await vi.waitFor(() => expect(budget.waiting()).toContainEqual(expect.objectContaining({ account: 'prod', kind: 'account', name: 'cluster connection' })), WAIT);
    expect(versions()).toBe(before);
    expect(agent.holder().view('prod')).toBeUndefined();
    release();
    await vi.waitFor(() => expect(agent.holder().view('prod')).toBeDefined(), WAIT);
    expect(versions()).toBeGreaterThan(before);
  });

  it('the tasks of an account stop when it is unregistered, those waiting for budget too', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    // One list at a time, each slowed down: most scopes wait for budget when the account goes.
    const agent = await world.agent('agent-4', { target: `127.0.0.1:${driver.port}`, tasks: { totalBudget: 1 } });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    world.kube.faults.latency(300, { verb: ['list', 'watch'] });
    try {
      await world.activate('prod');
      const budget = agent.running.ctx.budget;
      await vi.waitFor(() => expect(budget.waiting().filter((t) => t.account === 'prod' && t.kind === 'informer').length).toBeGreaterThan(3), WAIT);
      expect((await world.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
      await vi.waitFor(() => expect(agent.holder().view('prod')).toBeUndefined(), WAIT);
      expect(budget.usage()).toEqual({ total: 0, byAccount: {}, running: 0, waiting: 0 });
      await vi.waitFor(() => expect(watches()).toBe(0), WAIT);
    } finally {
      world.kube.faults.clear();
    }
  });
});
