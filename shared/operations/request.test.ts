import { describe, expect, it } from 'vitest';
import { refusal } from '../../test/refusal.ts';
import { requestIssues } from './check.ts';
import { parseManifests } from './manifests.ts';
import { MAX_REVISION, parseOperationRequest } from './request.ts';

const deployment = (name: string, namespace?: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  spec: { replicas: 1 },
});

describe('parseManifests', () => {
  it('reads multi-document YAML, skips empty documents and expands List items', () => {
    const yaml = [
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: a }',
      '---',
      '---',
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - { apiVersion: v1, kind: Secret, metadata: { name: b } }',
      '  - { apiVersion: v1, kind: Service, metadata: { name: c, namespace: shop } }',
      '',
    ].join('\n');
    const { manifests, paths, issues } = parseManifests(yaml);
    expect(issues).toEqual([]);
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(['ConfigMap/a', 'Secret/b', 'Service/c']);
    expect(paths).toEqual(['manifests[0]', 'manifests[2].items[0]', 'manifests[2].items[1]']);
  });

  it('names each bad manifest and field, and the line of bad YAML', () => {
    const { issues } = parseManifests([
      'text',
      { kind: 'Pod', metadata: { name: 'p' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'p-' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a/b', namespace: 'Not_A_Namespace' } },
      { apiVersion: 'not a version', kind: '1Pod' },
    ]);
    expect(issues).toEqual([
      { path: 'manifests[0]', message: 'must be an object (a Kubernetes manifest)' },
      { path: 'manifests[1].apiVersion', message: 'is required' },
      { path: 'manifests[2].metadata.name', message: 'is required (generateName cannot be used: server-side apply needs the name)' },
      { path: 'manifests[3].metadata.name', message: '"a/b" cannot be an object name (no "/", "%", white space, "." or "..")' },
      { path: 'manifests[3].metadata.namespace', message: 'must be a namespace name (lower-case letters, digits and "-", at most 63 characters)' },
      { path: 'manifests[4].apiVersion', message: '"not a version" is not an API version (such as v1 or apps/v1)' },
      { path: 'manifests[4].kind', message: '"1Pod" is not a kind (such as Deployment)' },
      { path: 'manifests[4].metadata', message: 'is required, with a name' },
    ]);
    const bad = parseManifests('apiVersion: v1\nkind: Pod\nmetadata: { name: ok }\n---\nkind: [unclosed\n');
    expect(bad.manifests).toHaveLength(1);
    expect(bad.issues).toHaveLength(1);
    expect(bad.issues[0]?.path).toBe('manifests[1]');
    expect(bad.issues[0]?.message).toMatch(/^YAML document 2 is not valid YAML \(line \d+\)/);
  });

  it('names a YAML document whose aliases cannot be resolved, or that repeats an anchor past the bound, and reads the rest', () => {
    const unresolved = parseManifests('apiVersion: v1\nkind: Pod\nmetadata: { name: ok }\n---\n*l\n');
    expect(unresolved.manifests).toHaveLength(1);
    expect(unresolved.issues).toEqual([{ path: 'manifests[1]', message: 'YAML document 2 cannot be read: an alias names no anchor set before it' }]);
    // Each level refers to the one before ten times: 10^4 copies of the first from a few hundred bytes.
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 4; i++) levels.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    const bomb = parseManifests(levels.join('\n'));
    expect(bomb.issues).toEqual([{ path: 'manifests[0]', message: 'YAML document 1 cannot be read: its aliases expand to more than 100 nodes' }]);
    expect(() => parseOperationRequest({ action: 'deploy', manifests: '*l' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it('refuses a request with nothing to apply', () => {
    expect(parseManifests('---\n').issues).toEqual([{ path: 'manifests', message: 'holds no manifest' }]);
    expect(parseManifests([]).issues).toEqual([{ path: 'manifests', message: 'holds no manifest' }]);
  });
});

describe('parseOperationRequest', () => {
  it('returns a deploy with parsed manifests and defaults', () => {
    const { request } = parseOperationRequest({ action: 'deploy', manifests: [deployment('web')], namespace: 'shop' });
    expect(request).toEqual({ action: 'deploy', manifests: [deployment('web')], namespace: 'shop', forceConflicts: false });
  });

  it('refuses the same object twice, counting the namespace override', () => {
    const err = refusal(() => parseOperationRequest({ action: 'deploy', manifests: [deployment('web', 'a'), deployment('web', 'b')], namespace: 'shop' }));
    expect(err.code).toBe('invalid_input');
    expect(err.issues).toEqual([{ path: 'manifests[1]', message: 'the same object as manifests[0] (Deployment web)' }]);
    expect(parseOperationRequest({ action: 'deploy', manifests: [deployment('web', 'a'), deployment('web', 'b')] }).request.action).toBe('deploy');
  });

  it('names an unknown action, unknown fields and bad values', () => {
    expect(refusal(() => parseOperationRequest({ action: 'explode' })).issues[0]).toMatchObject({ path: 'action' });
    const err = refusal(() =>
      parseOperationRequest({ action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', extra: 1 }], replicas: -1 }),
    );
    expect(err.issues).toEqual([
      { path: 'targets[0].extra', message: 'unknown field' },
      { path: 'replicas', message: 'must be at least 0' },
    ]);
  });

  it('matches the patch document to the patch type', () => {
    const target = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };
    expect(parseOperationRequest({ action: 'patch', target, patchType: 'json', patch: [{ op: 'replace', path: '/spec/replicas', value: 2 }] }).request).toMatchObject({ patchType: 'json' });
    expect(refusal(() => parseOperationRequest({ action: 'patch', target, patchType: 'merge', patch: [] })).issues).toEqual([
      { path: 'patch', message: 'a json patch is a list of operations; a strategic or merge patch is an object' },
    ]);
    expect(refusal(() => parseOperationRequest({ action: 'patch', target, patchType: 'json', patch: [{ op: 'frobnicate', path: 'x' }] })).issues.map((i) => i.path)).toContain('patch[0].op');
  });

  it('fills in the revision of an undo', () => {
    const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
    expect(parseOperationRequest({ action: 'rolloutUndo', target }).request).toEqual({ action: 'rolloutUndo', target, toRevision: 0 });
  });

  it('refuses a revision no 64-bit field could carry exactly, which the agent would refuse too', () => {
    const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
    expect(parseOperationRequest({ action: 'rolloutUndo', target, toRevision: MAX_REVISION }).request).toMatchObject({ toRevision: MAX_REVISION });
    expect(refusal(() => parseOperationRequest({ action: 'rolloutUndo', target, toRevision: 1e300 })).issues).toEqual([
      { path: 'toRevision', message: `must be at most ${MAX_REVISION}` },
    ]);
  });
});

describe('requestIssues', () => {
  const restricted = { namespaces: ['shop'], onlyNamespacedResources: true, customResourceDefinitions: [{ kind: 'Rollout.argoproj.io' }] };

  it('refuses namespaces outside the list, cluster-scoped kinds and unlisted CRDs with onlyNamespacedResources', () => {
    const { request, paths } = parseOperationRequest({
      action: 'deploy',
      manifests: [
        deployment('ok', 'shop'),
        deployment('elsewhere', 'other'),
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' } },
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' } },
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'r', namespace: 'shop' } },
        deployment('defaulted'),
      ],
    });
    expect(requestIssues(request, paths, restricted)).toEqual([
      { path: 'manifests[1]', message: 'namespace "other" is not one of the account\'s namespaces (shop)' },
      { path: 'manifests[2]', message: 'ClusterRole is not namespaced; with onlyNamespacedResources the account deploys namespaced resources only' },
      { path: 'manifests[3]', message: "Widget.example.com is a custom resource not listed in the account's customResourceDefinitions; with onlyNamespacedResources it cannot be deployed" },
      { path: 'manifests[5]', message: 'namespace "default" is not one of the account\'s namespaces (shop)' },
    ]);
  });

  it('applies the namespace override before checking, and allows everything on an open account', () => {
    const { request, paths } = parseOperationRequest({ action: 'deploy', manifests: [deployment('web', 'other')], namespace: 'shop' });
    expect(requestIssues(request, paths, restricted)).toEqual([]);
    const wide = parseOperationRequest({ action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }, deployment('a', 'b')] });
    expect(requestIssues(wide.request, wide.paths, {})).toEqual([]);
    expect(requestIssues(wide.request, wide.paths, { namespaces: ['b'] })).toEqual([
      { path: 'manifests[0]', message: 'namespace "x" is not one of the account\'s namespaces (b)' },
    ]);
  });

  it('refuses every cluster-scoped kind on an account limited to namespaces unless clusterScopedKinds names it', () => {
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'take-over' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' } };
    const volume = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' } };
    const listedCrd = { apiVersion: 'example.com/v1', kind: 'Gate', metadata: { name: 'g' } };
    const { request, paths } = parseOperationRequest({ action: 'deploy', manifests: [deployment('ok', 'shop'), binding, volume, listedCrd] });
    const account = { namespaces: ['shop'], customResourceDefinitions: [{ kind: 'Gate.example.com', scope: 'Cluster' }] };
    expect(requestIssues(request, paths, account)).toEqual([
      { path: 'manifests[1]', message: 'ClusterRoleBinding.rbac.authorization.k8s.io "take-over" is cluster-scoped, and ClusterRoleBinding.rbac.authorization.k8s.io is not in the account\'s clusterScopedKinds: an account limited to namespaces (shop) operates only on the cluster-scoped kinds listed there' },
      { path: 'manifests[2]', message: 'PersistentVolume "pv" is cluster-scoped, and PersistentVolume is not in the account\'s clusterScopedKinds: an account limited to namespaces (shop) operates only on the cluster-scoped kinds listed there' },
      { path: 'manifests[3]', message: 'Gate.example.com "g" is cluster-scoped, and Gate.example.com is not in the account\'s clusterScopedKinds: an account limited to namespaces (shop) operates only on the cluster-scoped kinds listed there' },
    ]);
    // Named kinds pass, core kinds by Kind alone and others by Kind.group; a kind of the same name in another group does not.
    expect(requestIssues(request, paths, { ...account, clusterScopedKinds: ['ClusterRoleBinding.rbac.authorization.k8s.io', 'PersistentVolume', 'Gate.example.com'] })).toEqual([]);
    expect(requestIssues(request, paths, { ...account, clusterScopedKinds: ['ClusterRoleBinding', 'PersistentVolume.core', 'Gate'] }).map((i) => i.path)).toEqual(['manifests[1]', 'manifests[2]', 'manifests[3]']);
    // Every action, not only deploy.
    for (const body of [
      { action: 'delete', targets: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'admin' }] },
      { action: 'patch', target: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'admin' }, patchType: 'merge', patch: { rules: [] } },
      { action: 'scale', targets: [{ apiVersion: 'v1', kind: 'Node', name: 'n1' }], replicas: 0 },
    ]) {
      const parsed = parseOperationRequest(body);
      expect(requestIssues(parsed.request, parsed.paths, account), body.action).toHaveLength(1);
    }
    // Kinds of newer Kubernetes versions are known too, so refused before anything is stored.
    const newer = parseOperationRequest({ action: 'deploy', manifests: [{ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'wide' } }, { apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'gpu' } }] });
    expect(requestIssues(newer.request, newer.paths, account).map((i) => i.path)).toEqual(['manifests[0]', 'manifests[1]']);
    // Without namespaces nothing changes: the account reaches the whole cluster anyway.
    expect(requestIssues(request, paths, {})).toEqual([]);
  });

  it('keeps a listed Namespace deployable and an unlisted one refused, whatever clusterScopedKinds says', () => {
    const { request, paths } = parseOperationRequest({
      action: 'deploy',
      manifests: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } }],
    });
    expect(requestIssues(request, paths, { namespaces: ['shop'], clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io'] })).toEqual([
      { path: 'manifests[1]', message: 'namespace "kube-system" is not one of the account\'s namespaces (shop)' },
    ]);
  });

  it('leaves the namespace of a kind only the cluster knows to the agent', () => {
    const { request, paths } = parseOperationRequest({ action: 'deploy', manifests: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }] });
    expect(requestIssues(request, paths, { namespaces: ['shop'] })).toEqual([]);
  });

  it('allows rollouts on workloads only', () => {
    const { request, paths } = parseOperationRequest({
      action: 'rolloutRestart',
      targets: [
        { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'shop', name: 'db' },
        { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'p' },
      ],
    });
    expect(requestIssues(request, paths, {})).toEqual([
      { path: 'targets[1].kind', message: 'rollout restart applies to apps/v1 Deployment, StatefulSet and DaemonSet, not Pod' },
    ]);
    const undo = parseOperationRequest({ action: 'rolloutUndo', target: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' } });
    expect(requestIssues(undo.request, undo.paths, {})).toEqual([{ path: 'target.kind', message: 'rollout undo applies to apps/v1 Deployment, not StatefulSet' }]);
  });
});
