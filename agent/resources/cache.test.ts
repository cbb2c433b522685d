import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getCacheHealth } from '../../shared/table/resources/health.ts';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap, listsOf } from '../../test/resource-cache-harness.ts';
import { threadDecoder } from './decoder.ts';

let f: CacheFixture;
beforeEach(async () => {
  f = await new CacheFixture().start();
  f.kube.store.ensureNamespace('shop');
  for (let i = 0; i < 30; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
});
afterEach(async () => {
  await f.close();
});

const converged = () => vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), WAIT);

describe('the resource cache', () => {
  it('caches every kind of the cluster into the table and follows creates, updates and deletes', async () => {
    await f.agent();
    await converged();
    f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-3' });
    f.kube.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-4' }, { data: { a: '2' } });
    f.kube.store.create(configMap('shop', 'late'));
    await converged();
    const compact = await f.tableCompact();
    expect(compact.get('ConfigMap|shop/cm-4')).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'cm-4', namespace: 'shop' }, dataKeys: ['a'] });
    expect(JSON.stringify([...compact.values()])).not.toContain('managedFields');
  });

  it('decodes in threads of its own just the same, WatchList and paged lists alike', async () => {
    const decoder = threadDecoder(2);
    try {
      await f.agent({ decoder });
      await converged();
      f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-7' });
      for (let i = 0; i < 50; i++) f.kube.store.upsert(configMap('shop', `cm-${i % 10}`, { v: String(i) }));
      await converged();
      await f.close();
      f = await new CacheFixture().start({ watchList: false });
      for (let i = 0; i < 120; i++) f.kube.store.create(configMap('default', `cm-${i}`));
      await f.agent({ decoder });
      await converged();
    } finally {
      await decoder.close();
    }
  });

  it('uses paged lists where the API server has no WatchList (Kubernetes 1.20)', async () => {
    await f.close();
    f = await new CacheFixture().start({ watchList: false });
    f.kube.store.ensureNamespace('shop');
    for (let i = 0; i < 120; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
    await f.agent();
    await converged();
    // The WatchList is tried once per cluster; every kind is then listed in pages of 50.
    expect(f.kube.requests.log().filter((r) => r.query.includes('sendInitialEvents=true'))).toHaveLength(1);
    expect(f.kube.requests.count({ verb: 'list', resource: 'configmaps', query: { limit: '50' } })).toBe(3);
    expect(listsOf(f.kube, 'pods')).toBe(1);
  });

  it('reports health per kind and updates the Prometheus metrics', async () => {
    const agent = await f.agent();
    await converged();
    await vi.waitFor(async () => {
      const health = await getCacheHealth(f.table, f.account);
      expect(health?.agentId).toBe('agent-1');
      expect(health?.kinds.find((k) => k.kind === 'ConfigMap')).toMatchObject({ scopes: 1, watching: 1, objects: 30, relists: 1, expired: 0 });
    }, WAIT);
    f.kube.store.create(configMap('shop', 'one-more'));
    await vi.waitFor(async () => {
      const cm = (await getCacheHealth(f.table, f.account))?.kinds.find((k) => k.kind === 'ConfigMap');
      expect(cm?.objects).toBe(31);
      expect(cm?.lastEventAt).toBeGreaterThan(0);
    }, WAIT);
    const text = await agent.metrics.registry.metrics();
    expect(text).toMatch(/vendor_agent_watch_events_total\{account="prod",kind="ConfigMap",type="ADDED"\} 1/);
    expect(text).toMatch(/vendor_agent_relists_total\{account="prod",kind="ConfigMap"\} 1/);
    expect(text).toMatch(/vendor_agent_cache_objects\{account="prod",kind="ConfigMap"\} 31/);
    expect(text).toMatch(/vendor_agent_cache_bytes\{account="prod",kind="ConfigMap"\} [1-9]\d+/);
  });

  it('counts every watch event of a burst once in vendor_agent_watch_events_total', async () => {
    const agent = await f.agent();
    await converged();
    // Made in one turn, the updates arrive in few batches of watch lines: each event still counts once,
    // in this burst and in the next.
    for (let i = 0; i < 30; i++) f.kube.store.upsert(configMap('shop', `cm-${i % 15}`, { v: String(i) }));
    await converged();
    for (let i = 30; i < 45; i++) f.kube.store.upsert(configMap('shop', `cm-${i % 15}`, { v: String(i) }));
    f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-20' });
    await converged();
    await vi.waitFor(async () => {
      const text = await agent.metrics.registry.metrics();
      expect(text).toMatch(/vendor_agent_watch_events_total\{account="prod",kind="ConfigMap",type="MODIFIED"\} 45\n/);
      expect(text).toMatch(/vendor_agent_watch_events_total\{account="prod",kind="ConfigMap",type="DELETED"\} 1\n/);
    }, WAIT);
  });

  it('stops when the role moves while it discovers the cluster, and starts nothing afterwards', async () => {
    // One group's discovery document never comes: the cache is still discovering when the role moves.
    f.kube.faults.inject({ match: { path: '/apis/apps/v1' }, times: Infinity, action: { type: 'hang' } });
    const agent = await f.agent();
    await vi.waitFor(() => expect(f.kube.requests.log().some((r) => r.path === '/apis/apps/v1')).toBe(true), WAIT);
    await agent.worker.update({ ...agent.view, caching: false });
    expect(agent.worker.run).toBeUndefined();
    expect(f.kube.requests.log().filter((r) => r.verb === 'list' || r.verb === 'watch')).toEqual([]);
  });

  it('stops when the role moves while the driver holds its batches back and its watches have read ahead', async () => {
    for (let i = 0; i < 1500; i++) f.kube.store.create(configMap('shop', `bulk-${i}`, { payload: 'x'.repeat(200) }));
    let release = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const agent = await f.agent({ hold, batch: { maxChanges: 10, window: 1 } });
    // Nothing is acknowledged: the batcher's window fills, the reflectors wait on it, and the watches
    // read on until their decoded lines fill the read-ahead.
    await vi.waitFor(() => expect(agent.worker.run?.status().backlog).toBeGreaterThanOrEqual(2), WAIT);
    // Room for the watches to read ahead; a shorter pause can only make this test easier to pass.
    await new Promise((r) => setTimeout(r, 200));
    await agent.worker.update({ ...agent.view, caching: false });
    expect(agent.worker.run).toBeUndefined();
    release();
  });
});

describe('the caching epoch rule', () => {
  it('an agent the account item does not name as caching agent does not cache until it does', async () => {
    await f.setCaching('agent-2', 5);
    const agent = await f.agent({ epoch: 5 });
    await vi.waitFor(() => expect(agent.logs.lines.some((l) => l.msg === 'the driver does not accept this agent as the caching agent yet')).toBe(true), WAIT);
    expect(listsOf(f.kube)).toBe(0);
    expect((await f.tableObjects()).size).toBe(0);
    await f.setCaching('agent-1', 5);
    await converged();
  });

  it('batches of an agent whose epoch was superseded are acknowledged and not written', async () => {
    await f.agent({ epoch: 1 });
    await converged();
    await f.setCaching('agent-1', 2);
    f.kube.store.create(configMap('shop', 'from-the-old-epoch'));
    await vi.waitFor(() => expect(f.driverLogs.lines.some((l) => String(l.msg).startsWith('resource events refused: caching epoch 1'))).toBe(true), WAIT);
    await f.written();
    expect((await f.tableObjects()).has('ConfigMap|shop/from-the-old-epoch')).toBe(false);
  });
});
