import { describe, expect, it } from 'vitest';
import { accountSettings } from '../../test/resource-cache-harness.ts';
import { progressSource } from './cache-filter.ts';
import { kindMatches, selectScopes } from './selection.ts';
import { scopeId, type ResourceType } from './types.ts';

const t = (group: string, kind: string, plural: string, namespaced: boolean, singular = ''): ResourceType => ({
  group,
  version: 'v1',
  kind,
  plural,
  singular: singular || kind.toLowerCase(),
  namespaced,
  verbs: ['list', 'watch'],
});

const TYPES: ResourceType[] = [
  t('', 'Pod', 'pods', true),
  t('', 'ConfigMap', 'configmaps', true),
  t('', 'Namespace', 'namespaces', false),
  t('', 'Node', 'nodes', false),
  t('apps', 'Deployment', 'deployments', true),
  t('apps', 'ReplicaSet', 'replicasets', true),
  t('apiextensions.k8s.io', 'CustomResourceDefinition', 'customresourcedefinitions', false),
  t('argoproj.io', 'Rollout', 'rollouts', true),
  t('example.com', 'Deployment', 'deployments', true),
];

const ids = (settings = {}) => selectScopes(TYPES, accountSettings(settings)).scopes.map(scopeId);

describe('which scopes an account caches', () => {
  it('caches every kind everywhere by default, with nothing synthetic', () => {
    const s = selectScopes(TYPES, accountSettings());
    expect(s.scopes.map(scopeId)).toEqual([
      'ConfigMap', 'CustomResourceDefinition.apiextensions.k8s.io', 'Deployment.apps', 'Deployment.example.com', 'Namespace', 'Node', 'Pod', 'ReplicaSet.apps', 'Rollout.argoproj.io',
    ]);
    expect(s.syntheticNamespaces).toEqual([]);
    expect(s.syntheticCrds).toEqual([]);
  });

  it('kinds: singular names without group, any case, CRDs too; Kind.group names one group', () => {
    expect(ids({ kinds: ['deployment', 'replicaSet', 'ROLLOUT'] })).toEqual(['Deployment.apps', 'Deployment.example.com', 'ReplicaSet.apps', 'Rollout.argoproj.io']);
    expect(ids({ kinds: ['Deployment.apps'] })).toEqual(['Deployment.apps']);
    expect(ids({ kinds: ['nothing'] })).toEqual([]);
  });

  it('omitKinds takes kinds out, after kinds', () => {
    expect(ids({ omitKinds: ['pod', 'node', 'customResourceDefinition', 'namespace', 'configmap', 'rollout', 'deployment'] })).toEqual(['ReplicaSet.apps']);
    expect(ids({ kinds: ['deployment'], omitKinds: ['Deployment.example.com'] })).toEqual(['Deployment.apps']);
  });

  it('namespaces: one scope per namespace and namespaced kind; namespaces become synthetic', () => {
    const s = selectScopes(TYPES, accountSettings({ namespaces: ['b', 'a', 'a'], kinds: ['pod', 'node', 'namespace'] }));
    expect(s.scopes.map(scopeId)).toEqual(['Node', 'Pod/a', 'Pod/b']);
    expect(s.syntheticNamespaces).toEqual(['a', 'b']);
  });

  it('onlyNamespacedResources: no cluster-scoped kind; listed namespaces and CRDs are synthetic', () => {
    const s = selectScopes(
      TYPES,
      accountSettings({
        onlyNamespacedResources: true,
        namespaces: ['shop'],
        customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: '' }, { kind: 'Bucket.storage.example.com', scope: 'Cluster' }, { kind: 'nodot', scope: '' }],
      }),
    );
    expect(s.scopes.every((x) => x.type.namespaced)).toBe(true);
    expect(s.scopes.map(scopeId)).toContain('Rollout.argoproj.io/shop');
    expect(s.syntheticNamespaces).toEqual(['shop']);
    expect(s.syntheticCrds).toEqual([
      { kind: 'Rollout', group: 'argoproj.io', plural: 'rollouts', scope: 'Namespaced' },
      { kind: 'Bucket', group: 'storage.example.com', plural: 'bucket', scope: 'Cluster' },
    ]);
  });

  it('does not make synthetic CRDs while CRDs themselves are watched', () => {
    const s = selectScopes(TYPES, accountSettings({ namespaces: ['shop'], customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: '' }] }));
    expect(s.scopes.map(scopeId)).toContain('CustomResourceDefinition.apiextensions.k8s.io');
    expect(s.syntheticCrds).toEqual([]);
    const hidden = selectScopes(TYPES, accountSettings({ namespaces: ['shop'], omitKinds: ['customresourcedefinition'], customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: '' }] }));
    expect(hidden.syntheticCrds.map((c) => c.kind)).toEqual(['Rollout']);
  });

  it('omitNamespaces with namespaces: a namespace listed in both is neither watched nor synthetic', () => {
    const s = selectScopes(TYPES, accountSettings({ namespaces: ['a', 'b', 'c'], omitNamespaces: ['b', 'zz'], kinds: ['pod', 'node', 'namespace'] }));
    expect(s.scopes.map(scopeId)).toEqual(['Node', 'Pod/a', 'Pod/c']);
    expect(s.scopes.every((x) => x.fieldSelector === undefined)).toBe(true);
    expect(s.syntheticNamespaces).toEqual(['a', 'c']);
    // Every listed namespace omitted: no namespaced scope at all, not every namespace.
    const none = selectScopes(TYPES, accountSettings({ namespaces: ['a'], omitNamespaces: ['a'], kinds: ['pod', 'node'] }));
    expect(none.scopes.map(scopeId)).toEqual(['Node']);
    expect(none.syntheticNamespaces).toEqual([]);
  });

  it('omitNamespaces without namespaces: one watch per kind, the API server leaves the omitted namespaces out', () => {
    const s = selectScopes(TYPES, accountSettings({ omitNamespaces: ['kube-system', ' odd,name=x ', 'kube-system'], kinds: ['pod', 'node', 'namespace'] }));
    expect(s.scopes.map((x) => [scopeId(x), x.fieldSelector])).toEqual([
      ['Namespace', 'metadata.name!=kube-system,metadata.name!=odd\\,name\\=x'],
      ['Node', undefined],
      ['Pod', 'metadata.namespace!=kube-system,metadata.namespace!=odd\\,name\\=x'],
    ]);
    expect(s.syntheticNamespaces).toEqual([]);
  });

  it('onlySpinnakerManaged: every scope selects the label deploy puts on what it applies', () => {
    const s = selectScopes(TYPES, accountSettings({ onlySpinnakerManaged: true, namespaces: ['a'], kinds: ['pod', 'node'] }));
    expect(s.scopes.map((x) => [scopeId(x), x.labelSelector, x.fieldSelector])).toEqual([
      ['Node', 'vendor-agent.io/managed=true', undefined],
      ['Pod/a', 'vendor-agent.io/managed=true', undefined],
    ]);
    expect(selectScopes(TYPES, accountSettings({ kinds: ['pod'] })).scopes[0]?.labelSelector).toBeUndefined();
  });

  it('progress is of the API server and the selectors: another filter is another source', () => {
    const server = 'https://k:6443';
    expect(progressSource(server, accountSettings())).toBe(server);
    expect(progressSource(server, accountSettings({ namespaces: ['a'], omitNamespaces: ['a'] }))).toBe(server);
    const filtered = [
      progressSource(server, accountSettings({ onlySpinnakerManaged: true })),
      progressSource(server, accountSettings({ omitNamespaces: ['x'] })),
      progressSource(server, accountSettings({ omitNamespaces: ['y'] })),
    ];
    expect(new Set([server, ...filtered]).size).toBe(4);
    expect(filtered.every((f) => f.startsWith(`${server} (`))).toBe(true);
  });

  it('matches kinds by kind or singular name only', () => {
    expect(kindMatches('pods', TYPES[0]!)).toBe(false);
    expect(kindMatches(' Pod ', TYPES[0]!)).toBe(true);
    expect(kindMatches('', TYPES[0]!)).toBe(false);
  });
});
