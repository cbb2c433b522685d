import { expect } from 'vitest';
import type { Json } from '../http.ts';
import { openWatch } from '../http.ts';
import {
  type Client, type Scenario, client, createNamespace, eventually, field, names, newNamespace, resourceVersion, unique,
} from './kube.ts';

function crd(group: string, plural: string, kind: string, scope: 'Namespaced' | 'Cluster', subresources?: object) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames: [plural.slice(0, 3)] },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        ...(subresources === undefined ? {} : { subresources }),
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      }],
    },
  };
}

/** Creates a CRD and waits until it is Established and its group version is discoverable. */
async function defineKind(c: Client, definition: ReturnType<typeof crd>): Promise<Json> {
  await c.expect(201, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: definition });
  await eventually(`${definition.metadata.name} Established`, async () => {
    const got = await c.expect(200, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${definition.metadata.name}`);
    const conditions = (field(got, 'status.conditions') ?? []) as { type: string; status: string }[];
    return conditions.some((k) => k.type === 'Established' && k.status === 'True') ? true : undefined;
  });
  return eventually(`${definition.spec.group}/v1 in discovery`, async () => {
    const res = await c.call(`/apis/${definition.spec.group}/v1`);
    return res.status === 200 && res.body ? res.body : undefined;
  });
}

export const crdScenarios: Scenario[] = [
  {
    name: 'CRDs: a namespaced CRD appears in discovery and its objects are served like built-in ones',
    async run(target) {
      const c = client(target);
      const group = `${unique('ns')}.scenarios.vendor.example`;
      const resources = await defineKind(c, crd(group, 'widgets', 'Widget', 'Namespaced'));
      expect(resources).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1` });
      expect(resources.resources).toEqual([{
        name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget',
        verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
        shortNames: ['wid'], storageVersionHash: expect.any(String),
      }]);
      const apis = await c.expect(200, '/apis');
      expect(apis.groups).toContainEqual({
        name: group, versions: [{ groupVersion: `${group}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${group}/v1`, version: 'v1' },
      });

      const ns = unique('crd');
      await createNamespace(c, ns);
      const base = `/apis/${group}/v1/namespaces/${ns}/widgets`;
      const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 3, colour: 'blue' } };
      const created = await c.expect(201, base, { method: 'POST', body: widget });
      expect(created).toMatchObject(widget);
      expect(await c.expect(200, `${base}/w1`)).toMatchObject({ spec: { size: 3, colour: 'blue' } });
      const list = await c.expect(200, base);
      expect(list).toMatchObject({ kind: 'WidgetList', apiVersion: `${group}/v1` });
      // Unlike built-in kinds, custom resources keep kind and apiVersion on every list item.
      expect((list.items as Json[])[0]).toMatchObject({ kind: 'Widget', apiVersion: `${group}/v1` });
      expect(names(list)).toEqual(['w1']);
      expect(names(await c.expect(200, `/apis/${group}/v1/widgets`))).toEqual(['w1']);
      const deleted = await c.expect(200, `${base}/w1`, { method: 'DELETE' });
      expect(deleted).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'w1', group, kind: 'widgets', uid: field(created, 'metadata.uid') } });
      await c.expect(404, `${base}/w1`);
    },
  },
  {
    name: 'CRDs: deleting a CRD deletes its objects (a watch sees DELETED, then ends) and takes its group out of discovery',
    timeoutMs: 60_000,
    async run(target) {
      const c = client(target);
      const group = `${unique('gone')}.scenarios.vendor.example`;
      const definition = crd(group, 'sprockets', 'Sprocket', 'Namespaced');
      await defineKind(c, definition);
      const { ns } = await newNamespace(target, 'crd-delete');
      const base = `/apis/${group}/v1/namespaces/${ns}/sprockets`;
      await c.expect(201, base, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Sprocket', metadata: { name: 's1', namespace: ns } } });
      const list = await c.expect(200, base);
      const watch = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);

      await c.expect(200, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${definition.metadata.name}`, { method: 'DELETE' });
      const { event } = await watch.until((e) => e.type === 'DELETED', 30_000);
      expect(event.object).toMatchObject({ kind: 'Sprocket', metadata: { name: 's1' } });
      const rest: string[] = [];
      for (let e = await watch.next(30_000); e !== 'end'; e = await watch.next(30_000)) rest.push(e.type);
      expect(rest).toEqual([]);

      await eventually('the CRD is gone', async () => {
        const res = await c.call(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${definition.metadata.name}`);
        return res.status === 404 ? true : undefined;
      }, 30_000);
      await eventually(`${group} leaves discovery`, async () => {
        const apis = await c.expect(200, '/apis');
        return (apis.groups as { name: string }[]).some((g) => g.name === group) ? undefined : true;
      }, 30_000);
      await c.expect(404, `/apis/${group}/v1`);
    },
  },
  {
    name: 'CRDs: a cluster-scoped CRD is discovered as not namespaced, with its subresources, and served without a namespace',
    async run(target) {
      const c = client(target);
      const group = `${unique('cl')}.scenarios.vendor.example`;
      const subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
      const resources = await defineKind(c, crd(group, 'gadgets', 'Gadget', 'Cluster', subresources));
      expect(resources.resources).toEqual([
        expect.objectContaining({ name: 'gadgets', singularName: 'gadget', namespaced: false, kind: 'Gadget' }),
        { name: 'gadgets/status', singularName: '', namespaced: false, kind: 'Gadget', verbs: ['get', 'patch', 'update'] },
        { name: 'gadgets/scale', singularName: '', namespaced: false, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
      ]);
      const gadget = { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { on: true } };
      const created = await c.expect(201, `/apis/${group}/v1/gadgets`, { method: 'POST', body: gadget });
      expect(field(created, 'metadata.namespace')).toBeUndefined();
      expect(names(await c.expect(200, `/apis/${group}/v1/gadgets`))).toEqual(['g1']);
      await c.expect(404, `/apis/${group}/v1/namespaces/default/gadgets/g1`);
    },
  },
];
