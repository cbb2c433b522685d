import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeConfigFor } from '../target.ts';
import { type Json, openWatch } from '../http.ts';
import {
  type Scenario, newNamespace, client, configMap, createConfigMap, createNamespace, expectStatusBody, names, resourceVersion, rvNumber, text, unique,
} from './kube.ts';

function deployment(namespace: string, name: string, templateLabels: Record<string, string> = { app: name }) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: templateLabels }, spec: { containers: [{ name: 'main', image: 'registry.example/app:1' }] } },
    },
  };
}

export const objectScenarios: Scenario[] = [
  {
    name: 'namespaced kinds: create, get, list per namespace and across namespaces, with server-set metadata',
    async run(target) {
      const c = client(target);
      const [nsA, nsB] = [unique('objects-a'), unique('objects-b')];
      const namespace = await createNamespace(c, nsA);
      expect(namespace).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: nsA }, status: { phase: 'Active' } });
      await createNamespace(c, nsB);

      const created = await createConfigMap(c, nsA, 'settings', { mode: 'fast' });
      expect(created).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'settings', namespace: nsA }, data: { mode: 'fast' } });
      expect(text(created, 'metadata.uid')).toMatch(/^[0-9a-f-]{36}$/);
      expect(text(created, 'metadata.creationTimestamp')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(resourceVersion(created)).toMatch(/^\d+$/);
      await createConfigMap(c, nsB, 'settings', { mode: 'slow' });

      const got = await c.expect(200, `/api/v1/namespaces/${nsA}/configmaps/settings`);
      expect(got).toMatchObject({ metadata: { uid: text(created, 'metadata.uid'), resourceVersion: resourceVersion(created) }, data: { mode: 'fast' } });

      const inA = await c.expect(200, `/api/v1/namespaces/${nsA}/configmaps`);
      expect(inA).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
      expect(resourceVersion(inA)).toMatch(/^\d+$/);
      expect(names(inA)).toEqual(['settings']);
      // List items of built-in kinds carry no kind or apiVersion: only the list says what they are.
      expect(Object.keys((inA.items as Json[])[0] ?? {})).toEqual(['metadata', 'data']);
      const everywhere = await c.expect(200, '/api/v1/configmaps');
      const ours = (everywhere.items as { metadata: { namespace: string } }[]).filter((i) => [nsA, nsB].includes(i.metadata.namespace));
      expect(ours.map((i) => i.metadata.namespace).sort()).toEqual([nsA, nsB].sort());

      const byLabel = await c.expect(200, `/api/v1/namespaces/${nsA}/configmaps?fieldSelector=metadata.name%3Dsettings`);
      expect(names(byLabel)).toEqual(['settings']);
      // An object written with nothing but its name has no fields to own: no managedFields at all.
      const bare = await c.expect(201, `/api/v1/namespaces/${nsB}/configmaps`, { method: 'POST', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bare' } } });
      expect(bare.metadata).not.toHaveProperty('managedFields');
    },
  },
  {
    name: 'namespaced kinds: not found, already exists and stale update answer Status bodies',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'errors');
      expectStatusBody(await c.expect(404, `/api/v1/namespaces/${ns}/configmaps/missing`), {
        code: 404, reason: 'NotFound', message: 'configmaps "missing" not found', details: { name: 'missing', kind: 'configmaps' },
      });
      const created = await createConfigMap(c, ns, 'once');
      expectStatusBody(await c.expect(409, `/api/v1/namespaces/${ns}/configmaps`, { method: 'POST', body: configMap(ns, 'once') }), {
        code: 409, reason: 'AlreadyExists', message: 'configmaps "once" already exists', details: { name: 'once', kind: 'configmaps' },
      });

      const updated = await c.expect(200, `/api/v1/namespaces/${ns}/configmaps/once`, {
        method: 'PUT', body: { ...configMap(ns, 'once', { v: '2' }), metadata: { name: 'once', namespace: ns, resourceVersion: resourceVersion(created) } },
      });
      expect(Number(resourceVersion(updated))).toBeGreaterThan(Number(resourceVersion(created)));
      const stale = await c.expect(409, `/api/v1/namespaces/${ns}/configmaps/once`, {
        method: 'PUT', body: { ...configMap(ns, 'once', { v: '3' }), metadata: { name: 'once', namespace: ns, resourceVersion: resourceVersion(created) } },
      });
      expectStatusBody(stale, {
        code: 409,
        reason: 'Conflict',
        message: 'Operation cannot be fulfilled on configmaps "once": the object has been modified; please apply your changes to the latest version and try again',
        details: { name: 'once', kind: 'configmaps' },
      });
      // The failed update changed nothing.
      expect(await c.expect(200, `/api/v1/namespaces/${ns}/configmaps/once`)).toMatchObject({ data: { v: '2' } });

      const missing = unique('missing');
      expectStatusBody(await c.expect(404, `/api/v1/namespaces/${missing}/configmaps`, { method: 'POST', body: configMap(missing, 'nowhere') }), {
        code: 404, reason: 'NotFound', message: `namespaces "${missing}" not found`, details: { name: missing, kind: 'namespaces' },
      });

      const invalid = await c.expect(422, `/api/v1/namespaces/${ns}/configmaps`, { method: 'POST', body: configMap(ns, 'Not_A_Name') });
      expectStatusBody(invalid, { code: 422, reason: 'Invalid', message: /^ConfigMap "Not_A_Name" is invalid: metadata.name: Invalid value: "Not_A_Name"/ });
    },
  },
  {
    name: 'cluster-scoped kinds: served without a namespace, not under one',
    async run(target) {
      const c = client(target);
      const name = unique('vendor-reader');
      const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] };
      const created = await c.expect(201, '/apis/rbac.authorization.k8s.io/v1/clusterroles', { method: 'POST', body: role });
      expect(created.metadata).not.toHaveProperty('namespace');
      expect(await c.expect(200, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`)).toMatchObject({ metadata: { name }, rules: role.rules });
      const list = await c.expect(200, '/apis/rbac.authorization.k8s.io/v1/clusterroles');
      expect(list.kind).toBe('ClusterRoleList');
      expect(names(list)).toContain(name);
      await c.expect(404, `/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles/${name}`);
    },
  },
  {
    name: 'delete: the object is gone, a watch sees DELETED, deleting again is 404',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'delete');
      const cm = await createConfigMap(c, ns, 'doomed', { a: '1' });
      const deleted = await c.expect(200, `/api/v1/namespaces/${ns}/configmaps/doomed`, { method: 'DELETE' });
      // Kinds without graceful deletion answer a Success Status naming what was deleted.
      expect(deleted).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'doomed', kind: 'configmaps', uid: text(cm, 'metadata.uid') } });
      expectStatusBody(await c.expect(404, `/api/v1/namespaces/${ns}/configmaps/doomed`, { method: 'DELETE' }), {
        code: 404, reason: 'NotFound', message: 'configmaps "doomed" not found', details: { name: 'doomed', kind: 'configmaps' },
      });

      await c.expect(201, `/apis/apps/v1/namespaces/${ns}/deployments`, { method: 'POST', body: deployment(ns, 'web') });
      const gone = await c.expect(200, `/apis/apps/v1/namespaces/${ns}/deployments/web`, {
        method: 'DELETE', body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
      });
      expect(gone).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'web', group: 'apps', kind: 'deployments' } });
      await c.expect(404, `/apis/apps/v1/namespaces/${ns}/deployments/web`);
    },
  },
  {
    name: 'named groups: not found, already exists and invalid carry the group in their Status',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'group-errors');
      const base = `/apis/apps/v1/namespaces/${ns}/deployments`;
      expectStatusBody(await c.expect(404, `${base}/missing`), {
        code: 404, reason: 'NotFound', message: 'deployments.apps "missing" not found', details: { name: 'missing', group: 'apps', kind: 'deployments' },
      });
      await c.expect(201, base, { method: 'POST', body: deployment(ns, 'web') });
      expectStatusBody(await c.expect(409, base, { method: 'POST', body: deployment(ns, 'web') }), {
        code: 409, reason: 'AlreadyExists', message: 'deployments.apps "web" already exists', details: { name: 'web', group: 'apps', kind: 'deployments' },
      });
      const mismatched = deployment(ns, 'bad', { app: 'other', tier: 'web' });
      const detail = 'Invalid value: map[string]string{"app":"other", "tier":"web"}: `selector` does not match template `labels`';
      expectStatusBody(await c.expect(422, base, { method: 'POST', body: mismatched }), {
        code: 422,
        reason: 'Invalid',
        message: `Deployment.apps "bad" is invalid: spec.template.metadata.labels: ${detail}`,
        details: { name: 'bad', group: 'apps', kind: 'Deployment', causes: [{ reason: 'FieldValueInvalid', message: detail, field: 'spec.template.metadata.labels' }] },
      });
    },
  },
  {
    name: 'delete a pod that never ran: answered with deletionTimestamp and a zero grace period; a watch sees MODIFIED, then DELETED',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'pod-delete');
      const base = `/api/v1/namespaces/${ns}/pods`;
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'once', namespace: ns }, spec: { containers: [{ name: 'main', image: 'registry.example/app:1' }] } };
      const created = await c.expect(201, base, { method: 'POST', body: pod });
      const watch = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${resourceVersion(created)}`);
      expect(await watch.status).toBe(200);

      const answer = await c.expect(200, `${base}/once`, { method: 'DELETE' });
      expect(answer).toMatchObject({ kind: 'Pod', metadata: { name: 'once', deletionGracePeriodSeconds: 0 } });
      expect(text(answer, 'metadata.deletionTimestamp')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const marked = await watch.next();
      const gone = await watch.next();
      watch.close();
      expect(marked).toMatchObject({ type: 'MODIFIED', object: { metadata: { resourceVersion: resourceVersion(answer), deletionGracePeriodSeconds: 0 } } });
      expect(gone).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'once', deletionGracePeriodSeconds: 0 } } });
      if (gone !== 'end') expect(rvNumber(gone.object)).toBeGreaterThan(rvNumber(answer));
      await c.expect(404, `${base}/once`);
    },
  },
  {
    name: 'delete a namespace: answered with the Namespace, Terminating, with a deletionTimestamp',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'ns-delete');
      const answer = await c.expect(200, `/api/v1/namespaces/${ns}`, { method: 'DELETE' });
      expect(answer).toMatchObject({ kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } });
      expect(text(answer, 'metadata.deletionTimestamp')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    },
  },
  {
    name: 'objects through @kubernetes/client-node: create, read, list and delete',
    async run(target) {
      const core = kubeConfigFor(target, target.auth.admin).makeApiClient(CoreV1Api);
      const ns = unique('client-node');
      await core.createNamespace({ body: { metadata: { name: ns } } });
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'one' }, data: { a: 'b' } } });
      expect((await core.readNamespacedConfigMap({ namespace: ns, name: 'one' })).data).toEqual({ a: 'b' });
      expect((await core.listNamespacedConfigMap({ namespace: ns })).items.map((i) => i.metadata?.name)).toEqual(['one']);
      await core.deleteNamespacedConfigMap({ namespace: ns, name: 'one' });
      await expect(core.readNamespacedConfigMap({ namespace: ns, name: 'one' })).rejects.toMatchObject({ code: 404 });
    },
  },
];
