/**
 * omitNamespaces and onlySpinnakerManaged against the test API server: the API server is asked to
 * leave the objects out (field and label selectors on every list and watch), the table never holds
 * them, and a change of either key removes what the new filter leaves out even where watches could
 * have resumed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { scopeProgress } from '../../shared/table/resources/scopes.ts';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap, type CacheAgent, type ObjectVersions } from '../../test/resource-cache-harness.ts';

let f: CacheFixture;
afterEach(async () => {
  await f.close();
});

const MANAGED = { 'vendor-agent.io/managed': 'true' };

async function start(): Promise<CacheFixture> {
  f = await new CacheFixture().start();
  for (const ns of ['shop', 'kube-system']) {
    f.kube.store.ensureNamespace(ns);
    for (let i = 0; i < 3; i++) f.kube.store.create(configMap(ns, `cm-${i}`));
  }
  return f;
}

/** The cluster's objects whose key passes `keep`. */
function clusterWhere(keep: (key: string) => boolean): ObjectVersions {
  return new Map([...f.clusterObjects(BUILT_IN_KINDS)].filter(([key]) => keep(key)));
}

const outsideKubeSystem = (key: string) => !key.includes('|kube-system/') && key !== 'Namespace|kube-system';

async function converged(keep: (key: string) => boolean): Promise<void> {
  await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(clusterWhere(keep)), WAIT);
}

/** Waits until the table holds where every running scope can resume. */
async function resumable(agent: CacheAgent): Promise<void> {
  await vi.waitFor(async () => {
    await f.written();
    expect((await scopeProgress(f.table, f.account)).length).toBe(agent.worker.run?.scopes().length);
  }, WAIT);
}

/** The list and watch requests of `resource` the cache sent. */
const requestsOf = (resource: string) => f.kube.requests.log().filter((r) => r.resource === resource && (r.verb === 'list' || r.verb === 'watch'));

describe('omitNamespaces', () => {
  it('without namespaces: one watch per kind, the API server leaves the omitted namespaces out, and the table never holds them', async () => {
    await start();
    await f.agent({ settings: { omitNamespaces: ['kube-system'] } });
    await converged(outsideKubeSystem);
    expect((await f.tableObjects()).has('ConfigMap|shop/cm-0')).toBe(true);
    // Filtered by the API server: every list and watch of a namespaced kind asks for it, once for every namespace.
    const configMaps = requestsOf('configmaps');
    expect(configMaps.length).toBeGreaterThan(0);
    for (const r of configMaps) {
      expect(r.namespace).toBe('');
      expect(decodeURIComponent(r.query)).toContain('fieldSelector=metadata.namespace!=kube-system');
    }
    for (const r of requestsOf('namespaces')) expect(decodeURIComponent(r.query)).toContain('fieldSelector=metadata.name!=kube-system');

    f.kube.store.create(configMap('kube-system', 'late'));
    f.kube.store.create(configMap('shop', 'late'));
    f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-1' });
    await converged(outsideKubeSystem);
  });

  it('with namespaces: a namespace listed in both is not cached, nor sent as a synthetic namespace', async () => {
    await start();
    f.kube.store.ensureNamespace('web');
    f.kube.store.create(configMap('web', 'w'));
    await f.agent({ settings: { namespaces: ['shop', 'kube-system'], omitNamespaces: ['kube-system'], kinds: ['configmap'] } });
    await vi.waitFor(async () => {
      const table = await f.tableObjects();
      expect([...table.keys()].sort()).toEqual(['ConfigMap|shop/cm-0', 'ConfigMap|shop/cm-1', 'ConfigMap|shop/cm-2', 'Namespace|shop']);
    }, WAIT);
    expect(requestsOf('configmaps').every((r) => r.namespace === 'shop')).toBe(true);
  });

  it('a change of the key removes what it now leaves out, though every watch could have resumed, and brings it back when lifted', async () => {
    await start();
    const first = await f.agent();
    await converged(() => true);
    await resumable(first);
    await first.stop();

    const second = await f.agent({ settings: { omitNamespaces: ['kube-system'] } });
    await converged(outsideKubeSystem);
    await resumable(second);
    await second.stop();

    await f.agent();
    await converged(() => true);
  });
});

describe('onlySpinnakerManaged', () => {
  it('caches only objects labelled vendor-agent.io/managed=true, selected by the API server; an object that loses the label leaves the table', async () => {
    await start();
    f.kube.store.create({ ...configMap('shop', 'deployed'), metadata: { name: 'deployed', namespace: 'shop', labels: MANAGED } });
    f.kube.store.create({ ...configMap('kube-system', 'deployed'), metadata: { name: 'deployed', namespace: 'kube-system', labels: MANAGED } });
    await f.agent({ settings: { onlySpinnakerManaged: true, omitNamespaces: ['kube-system'] } });
    const managed = (key: string) => key === 'ConfigMap|shop/deployed';
    await converged(managed);
    for (const r of f.kube.requests.log().filter((x) => x.verb === 'list' || x.verb === 'watch')) {
      expect(decodeURIComponent(r.query)).toContain('labelSelector=vendor-agent.io/managed=true');
    }

    f.kube.store.create({ ...configMap('shop', 'second'), metadata: { name: 'second', namespace: 'shop', labels: MANAGED } });
    await converged((key) => managed(key) || key === 'ConfigMap|shop/second');
    f.kube.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'second' }, { metadata: { labels: { 'vendor-agent.io/managed': null } } });
    await converged(managed);
  });

  it('switched off, the objects it left out are cached again though every watch could have resumed', async () => {
    await start();
    f.kube.store.create({ ...configMap('shop', 'deployed'), metadata: { name: 'deployed', namespace: 'shop', labels: MANAGED } });
    const first = await f.agent({ settings: { onlySpinnakerManaged: true } });
    await converged((key) => key === 'ConfigMap|shop/deployed');
    await resumable(first);
    await first.stop();
    await f.agent();
    await converged(() => true);
  });
});
