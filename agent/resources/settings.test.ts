/**
 * Each per-account setting (docs/agent-config.md#per-account-kubernetesaccounts) that shapes the cache, against the test API server: the
 * table holds exactly what the setting allows, and the API server is asked for nothing else.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap, crd, pod, type ObjectVersions } from '../../test/resource-cache-harness.ts';

let f: CacheFixture;
beforeEach(async () => {
  f = await new CacheFixture().start();
  for (const ns of ['a', 'b', 'c']) {
    f.kube.store.ensureNamespace(ns);
    f.kube.store.create(configMap(ns, `cm-${ns}`));
    f.kube.store.create(pod(ns, `pod-${ns}`));
  }
  f.kube.store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
});
afterEach(async () => {
  await f.close();
});

const without = (all: ObjectVersions, kinds: string[]) => new Map([...all].filter(([k]) => !kinds.includes(k.slice(0, k.indexOf('|')))));
const watchesOf = (resource: string) =>
  f.kube.requests.log().filter((r) => r.verb === 'watch' && r.resource === resource).map((r) => r.namespace);
const touched = (resource: string) => f.kube.requests.log().some((r) => (r.verb === 'list' || r.verb === 'watch') && r.resource === resource);

describe('what an account caches', () => {
  it('kinds: only the kinds named, by singular name in any case', async () => {
    await f.agent({ settings: { kinds: ['configMap', 'POD'] } });
    const expected = f.clusterObjects(BUILT_IN_KINDS.filter((k) => k.kind === 'ConfigMap' || k.kind === 'Pod'));
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(expected), WAIT);
    expect(touched('secrets')).toBe(false);
    expect(touched('nodes')).toBe(false);
  });

  it('omitKinds: every kind but those', async () => {
    await f.agent({ settings: { omitKinds: ['configmap', 'node'] } });
    const expected = without(f.clusterObjects(BUILT_IN_KINDS), ['ConfigMap', 'Node']);
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(expected), WAIT);
    expect(touched('configmaps')).toBe(false);
  });

  it('namespaces: one watch per namespace and kind, namespaces sent as synthetic resources, never watched', async () => {
    await f.agent({ settings: { namespaces: ['a', 'b'] } });
    const expected = without(f.clusterObjects(BUILT_IN_KINDS, ['a', 'b']), ['Namespace']);
    expected.set('Namespace|a', '');
    expected.set('Namespace|b', '');
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(expected), WAIT);
    expect(new Set(watchesOf('pods'))).toEqual(new Set(['a', 'b']));
    expect(new Set(watchesOf('configmaps'))).toEqual(new Set(['a', 'b']));
    expect(watchesOf('nodes')).toEqual(['']);
    expect(touched('namespaces')).toBe(false);
    const compact = await f.tableCompact();
    expect(compact.get('Namespace|a')).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, synthetic: true });

    // Changes in a watched namespace arrive; changes elsewhere do not.
    f.kube.store.create(configMap('a', 'new-a'));
    f.kube.store.create(configMap('c', 'new-c'));
    await vi.waitFor(async () => expect((await f.tableObjects()).has('ConfigMap|a/new-a')).toBe(true), WAIT);
    expect((await f.tableObjects()).has('ConfigMap|c/new-c')).toBe(false);
  });

  it('onlyNamespacedResources: no cluster-scoped kind; listed namespaces and CRDs are synthetic with their scope', async () => {
    f.kube.store.create(crd('Widget'));
    await f.kube.settled();
    await f.agent({
      settings: {
        onlyNamespacedResources: true,
        namespaces: ['a'],
        customResourceDefinitions: [{ kind: 'Widget.example.com', scope: '' }, { kind: 'Bucket.storage.example.com', scope: 'Cluster' }],
      },
    });
    const expected = f.clusterObjects(BUILT_IN_KINDS.filter((k) => !['Namespace', 'Node', 'CustomResourceDefinition'].includes(k.kind)), ['a']);
    expected.set('Namespace|a', '');
    expected.set('CustomResourceDefinition.apiextensions.k8s.io|widgets.example.com', '');
    expected.set('CustomResourceDefinition.apiextensions.k8s.io|bucket.storage.example.com', '');
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(expected), WAIT);
    for (const resource of ['nodes', 'namespaces', 'customresourcedefinitions']) expect(touched(resource)).toBe(false);
    const compact = await f.tableCompact();
    expect(compact.get('CustomResourceDefinition.apiextensions.k8s.io|widgets.example.com')).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced' },
      synthetic: true,
    });
    expect(compact.get('CustomResourceDefinition.apiextensions.k8s.io|bucket.storage.example.com')).toMatchObject({ spec: { scope: 'Cluster' }, synthetic: true });
  });

  it('kinds applies to custom resources, and a new CRD is picked up by reading discovery again', async () => {
    await f.agent({ settings: { kinds: ['widget', 'customResourceDefinition'] } });
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects([{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }])), WAIT);
    f.kube.store.create(crd('Widget'));
    await f.kube.settled();
    f.kube.store.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'a' }, spec: { size: 1 } });
    await vi.waitFor(async () => expect((await f.tableObjects()).get('Widget.example.com|a/w1')).toBeDefined(), WAIT);
    expect(f.kube.requests.log().some((r) => r.resource === 'gadgets')).toBe(false);

    // Deleting the CRD deletes its objects; the cache follows and stops watching the kind.
    f.kube.store.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' });
    await f.kube.settled();
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects([{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }])), WAIT);
  });

  it('a settings change re-shapes the cache and drops what is no longer cached', async () => {
    const first = await f.agent({ settings: { kinds: ['configmap', 'pod'] } });
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS.filter((k) => k.kind === 'ConfigMap' || k.kind === 'Pod'))), WAIT);
    await first.stop();
    await f.agent({ agentId: 'agent-1', settings: { kinds: ['configmap'], namespaces: ['b'] } });
    const expected = f.clusterObjects([{ apiVersion: 'v1', kind: 'ConfigMap' }], ['b']);
    expected.set('Namespace|b', '');
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(expected), WAIT);
  });
});
