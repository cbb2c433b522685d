import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUILT_IN_KINDS, CacheFixture } from '../../test/cache-harness.ts';

let f: CacheFixture;
beforeEach(async () => {
  f = await new CacheFixture().start();
});
afterEach(async () => {
  await f.close();
});

function configMap(ns: string, name: string, data: Record<string, string> = { a: '1' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

describe('the resource cache', () => {
  it('caches every kind of the cluster into the table and follows changes', async () => {
    f.kube.store.ensureNamespace('shop');
    for (let i = 0; i < 30; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
    const agent = await f.agent();
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), { timeout: 20_000, interval: 100 });
    f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-3' });
    f.kube.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-4' }, { data: { a: '2' } });
    f.kube.store.create(configMap('shop', 'late'));
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), { timeout: 20_000, interval: 100 });
    await agent.stop();
  });
});
