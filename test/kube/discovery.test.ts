import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, raw, watch } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer();
});
afterAll(async () => {
  await server.close();
});

function resource(list: unknown, name: string): unknown {
  const resources = at(list, 'resources');
  if (!Array.isArray(resources)) throw new Error('no resources');
  return resources.find((r) => at(r, 'name') === name);
}

describe('discovery', () => {
  it('serves /api, /version and the core resource list with scope, verbs, kinds and short names', async () => {
    const api = await raw(server.url, '/api');
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });

    const version = await raw(server.url, '/version');
    expect(version.json).toMatchObject({ major: '1', minor: '30', gitVersion: 'v1.30.0' });

    const core = await raw(server.url, '/api/v1');
    expect(core.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    expect(resource(core.json, 'pods')).toMatchObject({
      name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'],
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    });
    expect(resource(core.json, 'namespaces')).toMatchObject({ namespaced: false, kind: 'Namespace', shortNames: ['ns'] });
    expect(resource(core.json, 'pods/status')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    for (const name of ['services', 'configmaps', 'secrets', 'serviceaccounts', 'nodes', 'events']) {
      expect(resource(core.json, name), name).toBeDefined();
    }
  });

  it('lists the built-in groups with preferred versions and their resources, scale subresources included', async () => {
    const groups = await raw(server.url, '/apis');
    expect(groups.json).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1' });
    const names = (at(groups.json, 'groups') as unknown[]).map((g) => at(g, 'name'));
    expect(names).toEqual(expect.arrayContaining(['apps', 'batch', 'networking.k8s.io', 'apiextensions.k8s.io', 'metrics.k8s.io']));

    const apps = await raw(server.url, '/apis/apps');
    expect(apps.json).toMatchObject({ kind: 'APIGroup', name: 'apps', preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } });

    const appsV1 = await raw(server.url, '/apis/apps/v1');
    expect(resource(appsV1.json, 'deployments')).toMatchObject({ singularName: 'deployment', namespaced: true, kind: 'Deployment', shortNames: ['deploy'] });
    expect(resource(appsV1.json, 'deployments/scale')).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    for (const [gv, name] of [['batch/v1', 'cronjobs'], ['batch/v1', 'jobs'], ['networking.k8s.io/v1', 'ingresses'], ['networking.k8s.io/v1', 'networkpolicies'], ['apiextensions.k8s.io/v1', 'customresourcedefinitions']]) {
      expect(resource((await raw(server.url, `/apis/${gv}`)).json, name ?? ''), name).toBeDefined();
    }
  });

  it('answers unknown paths with a NotFound Status', async () => {
    for (const path of ['/apis/nope.example.com/v1', '/api/v2', '/api/v1/widgets', '/apis/apps/v1/namespaces/default/pods', '/api/v1/namespaces/default/nodes']) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.json).toEqual({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404,
      });
    }
  });

  it('turns a CRD into a served group/version/kind, namespaced or cluster-scoped, and removes it with the CRD', async () => {
    const crd = (name: string, scope: string, versions = ['v1']) => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
      metadata: { name: `${name}s.example.com` },
      spec: {
        group: 'example.com', scope,
        names: { plural: `${name}s`, singular: name, kind: name[0]?.toUpperCase() + name.slice(1), listKind: `${name[0]?.toUpperCase()}${name.slice(1)}List`, shortNames: [`${name[0]}x`] },
        versions: versions.map((v, i) => ({ name: v, served: true, storage: i === 0, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
      },
    });
    const created = await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: crd('widget', 'Namespaced', ['v1', 'v1beta1']) });
    expect(created.status).toBe(201);
    expect((await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: crd('gadget', 'Cluster') })).status).toBe(201);

    const group = await raw(server.url, '/apis/example.com');
    expect(group.json).toMatchObject({ name: 'example.com', preferredVersion: { version: 'v1' }, versions: [{ version: 'v1' }, { version: 'v1beta1' }] });
    const list = await raw(server.url, '/apis/example.com/v1');
    expect(resource(list.json, 'widgets')).toMatchObject({ namespaced: true, kind: 'Widget', singularName: 'widget', shortNames: ['wx'] });
    expect(resource(list.json, 'gadgets')).toMatchObject({ namespaced: false, kind: 'Gadget' });

    const w = await raw(server.url, '/apis/example.com/v1/namespaces/default/widgets', { method: 'POST', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } } });
    expect(w.status).toBe(201);
    const asBeta = await raw(server.url, '/apis/example.com/v1beta1/namespaces/default/widgets/w1');
    expect(asBeta.json).toMatchObject({ apiVersion: 'example.com/v1beta1', kind: 'Widget', spec: { size: 3 } });
    const g = await raw(server.url, '/apis/example.com/v1/gadgets', { method: 'POST', body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' } } });
    expect(g.status).toBe(201);
    expect((await raw(server.url, '/apis/example.com/v1/namespaces/default/gadgets')).status).toBe(404);

    await server.settled();
    const established = await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
    expect(at(established.json, 'status.conditions')).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]));

    const widgets = await watch(server.url, `/apis/example.com/v1/namespaces/default/widgets?watch=1&resourceVersion=${server.store.resourceVersion}`);
    const del = await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', { method: 'DELETE' });
    expect(del.status).toBe(200);
    await server.settled();
    // Watches on the kind see its objects go, then end, as kube-apiserver ends them with the definition.
    expect(await widgets.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'w1' } } });
    await widgets.ended;
    expect((await raw(server.url, '/apis/example.com/v1/namespaces/default/widgets')).status).toBe(404);
    expect(resource((await raw(server.url, '/apis/example.com/v1')).json, 'widgets')).toBeUndefined();
    expect((await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com')).status).toBe(404);
  });

  it('serves the RBAC kinds, namespaced and cluster-scoped', async () => {
    const rbac = await raw(server.url, '/apis/rbac.authorization.k8s.io/v1');
    expect(resource(rbac.json, 'clusterroles')).toMatchObject({ namespaced: false, kind: 'ClusterRole' });
    expect(resource(rbac.json, 'rolebindings')).toMatchObject({ namespaced: true, kind: 'RoleBinding' });
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
    expect((await raw(server.url, '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { method: 'POST', body: role })).status).toBe(201);
    expect(at((await raw(server.url, '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reader')).json, 'rules')).toEqual(role.rules);
  });

  it('requires the approval annotation for CRDs in protected groups', async () => {
    const body = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'networkpolicies.networking.k8s.io' },
      spec: { group: 'networking.k8s.io', scope: 'Namespaced', names: { plural: 'networkpolicies', kind: 'NetworkPolicy' }, versions: [{ name: 'v9', served: true, storage: true }] },
    };
    const res = await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ details: { causes: [{ field: 'metadata.annotations[api-approved.kubernetes.io]' }] } });
    const approved = { ...body, metadata: { ...body.metadata, annotations: { 'api-approved.kubernetes.io': 'https://example.com/1' } } };
    expect((await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: approved })).status).toBe(201);
    expect((await raw(server.url, '/apis/networking.k8s.io/v9/namespaces/default/networkpolicies')).status).toBe(404);
    expect((await raw(server.url, '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies')).status).toBe(200);
  });

  it('rejects an invalid CRD with a 422 naming the fields', async () => {
    const res = await raw(server.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      method: 'POST',
      body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'bad.example.com' }, spec: { group: 'example.com', scope: 'Everywhere', names: { plural: 'things', kind: 'Thing' }, versions: [] } },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422, details: { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition', name: 'bad.example.com' } });
    const fields = (at(res.json, 'details.causes') as unknown[]).map((c) => at(c, 'field'));
    expect(fields).toEqual(expect.arrayContaining(['spec.scope', 'spec.versions', 'metadata.name']));
  });

  it('hides metrics.k8s.io when the metrics API is off', async () => {
    server.setMetricsApi(false);
    try {
      const groups = await raw(server.url, '/apis');
      expect((at(groups.json, 'groups') as unknown[]).map((g) => at(g, 'name'))).not.toContain('metrics.k8s.io');
      expect((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/pods')).status).toBe(404);
    } finally {
      server.setMetricsApi(true);
    }
    expect((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/pods')).status).toBe(200);
  });
});
