import { KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { Json } from '../http.ts';
import { kubeConfigFor } from '../target.ts';
import { type Scenario, expectStatusBody, field, newNamespace, resourceVersion } from './kube.ts';

const APPLY = 'application/apply-patch+yaml';

type ManagedField = { manager: string; operation: string; apiVersion: string; time: string; fieldsType: string; fieldsV1: unknown };

function managers(obj: unknown): ManagedField[] {
  const found = field(obj, 'metadata.managedFields');
  expect(Array.isArray(found), 'managedFields is a list').toBe(true);
  return found as ManagedField[];
}

function applied(ns: string, data: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: ns }, data };
}

export const applyScenarios: Scenario[] = [
  {
    name: 'server-side apply: create, update by the same manager, managedFields per manager',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'apply');
      const path = `/api/v1/namespaces/${ns}/configmaps/applied`;

      // Applying to an object that does not exist creates it.
      const created = await c.expect(201, `${path}?fieldManager=alpha`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: '1' }) });
      expect(created).toMatchObject({ metadata: { name: 'applied', namespace: ns }, data: { a: '1' } });
      expect(managers(created)).toHaveLength(1);
      const entry = managers(created)[0] as ManagedField;
      expect(entry).toMatchObject({ manager: 'alpha', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } });
      expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

      // The same manager changes its own field and adds one; YAML bodies are accepted as well as JSON.
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: ${ns}\ndata:\n  a: "2"\n  b: "1"\n`;
      const updated = await c.expect(200, `${path}?fieldManager=alpha`, { method: 'PATCH', contentType: APPLY, body: yaml });
      expect(updated).toMatchObject({ data: { a: '2', b: '1' } });
      expect(Number(resourceVersion(updated))).toBeGreaterThan(Number(resourceVersion(created)));
      expect(managers(updated).map((m) => m.manager)).toEqual(['alpha']);

      // Another manager applying only a field of its own shares the object.
      const shared = await c.expect(200, `${path}?fieldManager=beta`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { c: '1' }) });
      expect(shared).toMatchObject({ data: { a: '2', b: '1', c: '1' } });
      expect(managers(shared).map((m) => [m.manager, m.operation, m.fieldsV1])).toEqual([
        ['alpha', 'Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } }],
        ['beta', 'Apply', { 'f:data': { 'f:c': {} } }],
      ]);

      // A field the manager stops applying is removed.
      const dropped = await c.expect(200, `${path}?fieldManager=alpha`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: '2' }) });
      expect(dropped.data).toEqual({ a: '2', c: '1' });

      // An ordinary update is recorded as an Update by its manager.
      const put = await c.expect(200, `${path}?fieldManager=gamma`, {
        method: 'PUT', body: { ...applied(ns, { a: '2', c: '1', d: 'x' }), metadata: { name: 'applied', namespace: ns } },
      });
      expect(managers(put).find((m) => m.manager === 'gamma')).toMatchObject({ operation: 'Update', fieldsV1: { 'f:data': { 'f:d': {} } } });
    },
  },
  {
    name: 'server-side apply: a conflict between managers is 409 with a cause per field; force takes the field over',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'apply-conflict');
      const path = `/api/v1/namespaces/${ns}/configmaps/applied`;
      await c.expect(201, `${path}?fieldManager=alpha`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: '1', b: '1' }) });

      const conflict = await c.expect(409, `${path}?fieldManager=beta`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: 'beta' }) });
      expectStatusBody(conflict, {
        code: 409,
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict: conflict with "alpha": .data.a',
        details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alpha"', field: '.data.a' }] },
      });
      // Nothing changed.
      expect(await c.expect(200, path)).toMatchObject({ data: { a: '1', b: '1' } });

      const forced = await c.expect(200, `${path}?fieldManager=beta&force=true`, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: 'beta' }) });
      expect(forced).toMatchObject({ data: { a: 'beta', b: '1' } });
      expect(managers(forced).map((m) => [m.manager, m.fieldsV1])).toEqual([
        ['alpha', { 'f:data': { 'f:b': {} } }],
        ['beta', { 'f:data': { 'f:a': {} } }],
      ]);

      // Apply needs a field manager.
      const anonymous = await c.expect(422, path, { method: 'PATCH', contentType: APPLY, body: applied(ns, { a: 'x' }) });
      expectStatusBody(anonymous, {
        code: 422,
        reason: 'Invalid',
        message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        details: {
          group: 'meta.k8s.io',
          kind: 'PatchOptions',
          causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
        },
      });
    },
  },
  {
    name: 'server-side apply of a Deployment: containers merge by name across managers; a field an updater set conflicts, naming its version; force takes it',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'apply-deploy');
      const path = `/apis/apps/v1/namespaces/${ns}/deployments/app`;
      const desired = (containers: { name: string; image: string }[], replicas?: number) => ({
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'app', namespace: ns },
        spec: { ...(replicas === undefined ? {} : { replicas }), selector: { matchLabels: { app: 'app' } }, template: { metadata: { labels: { app: 'app' } }, spec: { containers } } },
      });
      const main = (image: string) => ({ name: 'main', image });
      const images = (obj: Json) => (field(obj, 'spec.template.spec.containers') as { name: string; image: string }[]).map((k) => `${k.name}=${k.image}`);

      const created = await c.expect(201, `${path}?fieldManager=deployer`, { method: 'PATCH', contentType: APPLY, body: desired([main('app:1')], 2) });
      expect(managers(created)[0]).toMatchObject({ manager: 'deployer', operation: 'Apply', apiVersion: 'apps/v1' });
      expect(field(managers(created)[0], 'fieldsV1.f:spec.f:template.f:spec.f:containers')).toEqual({ 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {} } });

      // Another applier adds a container: lists of containers merge by name.
      const injected = await c.expect(200, `${path}?fieldManager=injector`, { method: 'PATCH', contentType: APPLY, body: desired([{ name: 'sidecar', image: 'proxy:1' }]) });
      expect(images(injected)).toEqual(['main=app:1', 'sidecar=proxy:1']);
      // The first applier changes its container only; the other one's stays.
      const rolled = await c.expect(200, `${path}?fieldManager=deployer`, { method: 'PATCH', contentType: APPLY, body: desired([main('app:2')], 2) });
      expect(images(rolled)).toEqual(['main=app:2', 'sidecar=proxy:1']);

      // An ordinary update (a scaler) takes the field it changed.
      const scaled = await c.expect(200, `${path}?fieldManager=scaler`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: 5 } } });
      expect(managers(scaled).find((m) => m.manager === 'scaler')).toMatchObject({ operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
      const conflict = await c.expect(409, `${path}?fieldManager=deployer`, { method: 'PATCH', contentType: APPLY, body: desired([main('app:3')], 2) });
      expectStatusBody(conflict, {
        code: 409,
        reason: 'Conflict',
        message: 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas',
        details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "scaler" using apps/v1', field: '.spec.replicas' }] },
      });
      // Leaving the field out shares the object; forcing takes the field, and a manager left with nothing goes.
      expect(field(await c.expect(200, `${path}?fieldManager=deployer`, { method: 'PATCH', contentType: APPLY, body: desired([main('app:3')]) }), 'spec.replicas')).toBe(5);
      const forced = await c.expect(200, `${path}?fieldManager=deployer&force=true`, { method: 'PATCH', contentType: APPLY, body: desired([main('app:3')], 3) });
      expect(field(forced, 'spec.replicas')).toBe(3);
      expect(managers(forced).map((m) => m.manager).sort()).toEqual(['deployer', 'injector']);
    },
  },
  {
    name: 'server-side apply through @kubernetes/client-node',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'client-apply');
      const objects = KubernetesObjectApi.makeApiClient(kubeConfigFor(target, target.auth.admin));
      const spec = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'via-client', namespace: ns }, data: { k: 'v' } };
      const result = await objects.patch(spec, undefined, undefined, 'vendor-agent', true, PatchStrategy.ServerSideApply);
      expect(managers(result)[0]).toMatchObject({ manager: 'vendor-agent', operation: 'Apply' });
      expect(await c.expect(200, `/api/v1/namespaces/${ns}/configmaps/via-client`)).toMatchObject({ data: { k: 'v' } });
    },
  },
];
