import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, deployment, names, pod, raw, str } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer();
  server.store.ensureNamespace('crud');
  server.store.ensureNamespace('other');
});
afterAll(async () => {
  await server.close();
});

const pods = '/api/v1/namespaces/crud/pods';

describe('create, get, update, delete', () => {
  it('creates with server-set metadata and answers 201; a second create is 409 AlreadyExists', async () => {
    const res = await raw(server.url, pods, { method: 'POST', body: pod('p1', 'crud', { app: 'a' }) });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p1', namespace: 'crud', labels: { app: 'a' } }, status: { phase: 'Pending' } });
    expect(str(res.json, 'metadata.uid')).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(str(res.json, 'metadata.resourceVersion'))).toBeGreaterThan(0);
    expect(str(res.json, 'metadata.creationTimestamp')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.text.startsWith('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1"')).toBe(true);

    const again = await raw(server.url, pods, { method: 'POST', body: pod('p1', 'crud') });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "p1" already exists',
      reason: 'AlreadyExists', details: { name: 'p1', kind: 'pods' }, code: 409,
    });
  });

  it('gets one object and answers a missing one with the NotFound Status of its group', async () => {
    expect((await raw(server.url, `${pods}/p1`)).json).toMatchObject({ metadata: { name: 'p1' } });
    const missing = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/nope');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ message: 'deployments.apps "nope" not found', reason: 'NotFound', details: { name: 'nope', group: 'apps', kind: 'deployments' }, code: 404 });
  });

  it('creates from YAML bodies and generateName', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: cfg-\ndata:\n  a: "1"\n';
    const res = await raw(server.url, '/api/v1/namespaces/crud/configmaps', { method: 'POST', body: yaml, contentType: 'application/yaml' });
    expect(res.status).toBe(201);
    expect(str(res.json, 'metadata.name')).toMatch(/^cfg-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(res.json).toMatchObject({ metadata: { generateName: 'cfg-' }, data: { a: '1' } });
  });

  it('refuses bad input with the real status codes and changes nothing', async () => {
    const before = server.store.resourceVersion;
    const noNs = await raw(server.url, '/api/v1/namespaces/ghost/pods', { method: 'POST', body: pod('x', 'ghost') });
    expect(noNs.status).toBe(404);
    expect(noNs.json).toMatchObject({ message: 'namespaces "ghost" not found', reason: 'NotFound' });

    const wrongNs = await raw(server.url, pods, { method: 'POST', body: pod('x', 'other') });
    expect(wrongNs.status).toBe(400);
    expect(wrongNs.json).toMatchObject({ reason: 'BadRequest', message: 'the namespace of the provided object does not match the namespace sent on the request' });

    const badName = await raw(server.url, pods, { method: 'POST', body: pod('Bad_Name', 'crud') });
    expect(badName.status).toBe(422);
    expect(badName.json).toMatchObject({ reason: 'Invalid', details: { name: 'Bad_Name', kind: 'Pod', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }] } });
    expect(str(badName.json, 'message')).toMatch(/^Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);

    const noContainers = await raw(server.url, pods, { method: 'POST', body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty' }, spec: {} } });
    expect(noContainers.status).toBe(422);
    expect(noContainers.json).toMatchObject({ message: 'Pod "empty" is invalid: spec.containers: Required value' });

    const d = deployment('mismatch', 'crud');
    (at(d, 'spec.template.metadata') as { labels: Record<string, string> }).labels = { app: 'other' };
    const mismatch = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments', { method: 'POST', body: d });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json).toMatchObject({ details: { group: 'apps', kind: 'Deployment', causes: [{ field: 'spec.template.metadata.labels' }] } });

    const wrongKind = await raw(server.url, pods, { method: 'POST', body: { ...pod('x', 'crud'), kind: 'Service' } });
    expect(wrongKind.status).toBe(400);

    const notJson = await raw(server.url, pods, { method: 'POST', body: '{nope', contentType: 'application/json' });
    expect(notJson.status).toBe(400);
    const protobuf = await raw(server.url, pods, { method: 'POST', body: 'x', contentType: 'application/vnd.kubernetes.protobuf' });
    expect(protobuf.status).toBe(415);
    expect(protobuf.json).toMatchObject({ reason: 'UnsupportedMediaType' });
    expect(server.store.resourceVersion).toBe(before);
  });

  it('updates with PUT, refuses a stale resourceVersion with 409 Conflict, and skips no-op writes', async () => {
    const current = await raw(server.url, `${pods}/p1`);
    const rv = str(current.json, 'metadata.resourceVersion');
    const next = { ...(current.json as object), metadata: { ...(at(current.json, 'metadata') as object), labels: { app: 'b' } } };
    const updated = await raw(server.url, `${pods}/p1`, { method: 'PUT', body: next });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ metadata: { labels: { app: 'b' }, uid: str(current.json, 'metadata.uid') } });
    const newRv = str(updated.json, 'metadata.resourceVersion');
    expect(Number(newRv)).toBeGreaterThan(Number(rv));

    const stale = await raw(server.url, `${pods}/p1`, { method: 'PUT', body: next });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      reason: 'Conflict', code: 409, details: { name: 'p1', kind: 'pods' },
      message: 'Operation cannot be fulfilled on pods "p1": the object has been modified; please apply your changes to the latest version and try again',
    });

    const same = await raw(server.url, `${pods}/p1`, { method: 'PUT', body: updated.json });
    expect(same.status).toBe(200);
    expect(str(same.json, 'metadata.resourceVersion')).toBe(newRv);

    const renamed = await raw(server.url, `${pods}/p1`, { method: 'PUT', body: { ...(updated.json as object), metadata: { name: 'p2' } } });
    expect(renamed.status).toBe(400);
    expect(renamed.json).toMatchObject({ message: 'the name of the object (p2) does not match the name on the URL (p1)' });
  });

  it('keeps status on main-resource writes and changes only status through /status; raises generation on spec changes', async () => {
    const created = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments', { method: 'POST', body: { ...deployment('web', 'crud'), status: { replicas: 9 } } });
    expect(created.json).toMatchObject({ metadata: { generation: 1 }, spec: { replicas: 1 }, status: {} });
    expect(at(created.json, 'status.replicas')).toBeUndefined();

    const withStatus = { ...(created.json as object), status: { replicas: 1, readyReplicas: 1 } };
    const viaStatus = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/web/status', { method: 'PUT', body: withStatus });
    expect(viaStatus.json).toMatchObject({ status: { replicas: 1, readyReplicas: 1 }, metadata: { generation: 1 } });

    const spec = { ...(viaStatus.json as object), spec: { ...(at(viaStatus.json, 'spec') as object), replicas: 4 }, status: {} };
    const viaMain = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/web', { method: 'PUT', body: spec });
    expect(viaMain.json).toMatchObject({ spec: { replicas: 4 }, status: { replicas: 1, readyReplicas: 1 }, metadata: { generation: 2 } });
  });

  it('deletes with a Status or the object as the real server does, honouring preconditions and propagationPolicy', async () => {
    await raw(server.url, pods, { method: 'POST', body: pod('gone', 'crud') });
    const badPre = await raw(server.url, `${pods}/gone`, { method: 'DELETE', body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } } });
    expect(badPre.status).toBe(409);
    const deleted = await raw(server.url, `${pods}/gone?propagationPolicy=Background`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ kind: 'Pod', metadata: { name: 'gone' } });
    expect((await raw(server.url, `${pods}/gone`)).status).toBe(404);

    const dep = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/web', { method: 'DELETE', body: { propagationPolicy: 'Foreground' } });
    expect(dep.status).toBe(200);
    await server.settled();
    expect((await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/web')).status).toBe(404);

    await raw(server.url, '/api/v1/namespaces/crud/configmaps', { method: 'POST', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } });
    const cm = await raw(server.url, '/api/v1/namespaces/crud/configmaps/c', { method: 'DELETE' });
    expect(cm.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'c', kind: 'configmaps' } });
    expect(at(cm.json, 'code')).toBeUndefined();

    const badPolicy = await raw(server.url, `${pods}/p1?propagationPolicy=Sometimes`, { method: 'DELETE' });
    expect(badPolicy.status).toBe(422);
  });

  it('garbage-collects dependents in the background and orphans them on request', async () => {
    const owner = server.store.create(deployment('owner', 'crud'));
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'owner', uid: owner.metadata.uid ?? '', controller: true };
    for (const n of ['rs-a', 'rs-b']) {
      server.store.create({ ...deployment(n, 'crud'), kind: 'ReplicaSet', metadata: { name: n, namespace: 'crud', ownerReferences: [ref] } });
    }
    server.store.delete({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'crud', name: 'owner' });
    await server.settled();
    expect(server.store.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'crud' }).map((r) => r.metadata.name)).toEqual([]);

    const keeper = server.store.create(deployment('keeper', 'crud'));
    server.store.create({ ...deployment('rs-c', 'crud'), kind: 'ReplicaSet', metadata: { name: 'rs-c', namespace: 'crud', ownerReferences: [{ ...ref, name: 'keeper', uid: keeper.metadata.uid ?? '' }] } });
    const res = await raw(server.url, '/apis/apps/v1/namespaces/crud/deployments/keeper?propagationPolicy=Orphan', { method: 'DELETE' });
    expect(res.status).toBe(200);
    await server.settled();
    expect(server.store.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'crud', name: 'keeper' })).toBeUndefined();
    const orphan = server.store.get({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'crud', name: 'rs-c' });
    expect(orphan?.metadata.ownerReferences).toBeUndefined();
  });

  it('keeps an object with finalizers until they are removed', async () => {
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'crud', finalizers: ['example.com/hold'] } });
    const del = await raw(server.url, '/api/v1/namespaces/crud/configmaps/held', { method: 'DELETE' });
    expect(del.json).toMatchObject({ kind: 'ConfigMap', metadata: { finalizers: ['example.com/hold'] } });
    expect(str(del.json, 'metadata.deletionTimestamp')).toMatch(/Z$/);
    const merge = await raw(server.url, '/api/v1/namespaces/crud/configmaps/held', { method: 'PATCH', body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    expect(merge.status).toBe(200);
    expect((await raw(server.url, '/api/v1/namespaces/crud/configmaps/held')).status).toBe(404);
  });

  it('terminates a deleted namespace: Terminating, content deleted, then gone; no new content meanwhile', async () => {
    server.store.ensureNamespace('doomed');
    server.store.create(pod('a', 'doomed'));
    server.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'doomed', finalizers: ['example.com/hold'] } });
    const del = await raw(server.url, '/api/v1/namespaces/doomed', { method: 'DELETE' });
    expect(del.json).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
    await server.settled();
    // The held secret keeps the namespace Terminating; everything else is gone.
    expect(server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'doomed' })).toEqual([]);
    expect((await raw(server.url, '/api/v1/namespaces/doomed')).json).toMatchObject({ status: { phase: 'Terminating' } });
    const blocked = await raw(server.url, '/api/v1/namespaces/doomed/pods', { method: 'POST', body: pod('late', 'doomed') });
    expect(blocked.status).toBe(403);
    expect(blocked.json).toMatchObject({ reason: 'Forbidden', details: { causes: [{ reason: 'NamespaceTerminating' }] } });
    server.store.patch({ apiVersion: 'v1', kind: 'Secret', namespace: 'doomed', name: 's' }, { metadata: { finalizers: null } });
    await server.settled();
    expect((await raw(server.url, '/api/v1/namespaces/doomed')).status).toBe(404);
  });

  it('validates and answers dry-run writes without storing them', async () => {
    const before = server.store.resourceVersion;
    const created = await raw(server.url, `${pods}?dryRun=All`, { method: 'POST', body: pod('dry', 'crud') });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ metadata: { name: 'dry', namespace: 'crud' } });
    expect(at(created.json, 'metadata.resourceVersion')).toBeUndefined();
    const deleted = await raw(server.url, `${pods}/p1?dryRun=All`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    const invalid = await raw(server.url, `${pods}?dryRun=All`, { method: 'POST', body: pod('Dry_Bad', 'crud') });
    expect(invalid.status).toBe(422);
    expect(server.store.resourceVersion).toBe(before);
    expect((await raw(server.url, `${pods}/p1`)).status).toBe(200);
    expect((await raw(server.url, `${pods}/dry`)).status).toBe(404);
  });

  it('deletes a collection by selector', async () => {
    for (const [n, tier] of [['x1', 'web'], ['x2', 'web'], ['x3', 'db']] as const) server.store.create(pod(n, 'other', { tier }));
    const res = await raw(server.url, '/api/v1/namespaces/other/pods?labelSelector=tier%3Dweb', { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(names(res.json).sort()).toEqual(['x1', 'x2']);
    expect(server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'other' }).map((p) => p.metadata.name)).toEqual(['x3']);
  });

  it('serves cluster-scoped kinds without a namespace and refuses the namespaced path for them', async () => {
    const node = await raw(server.url, '/api/v1/nodes', { method: 'POST', body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { zone: 'a' } } } });
    expect(node.status).toBe(201);
    expect(at(node.json, 'metadata.namespace')).toBeUndefined();
    expect((await raw(server.url, '/api/v1/nodes/n1')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/namespaces/crud/nodes/n1')).status).toBe(404);
  });

  it('answers 405 for methods a path does not take, and 406 when JSON is not acceptable', async () => {
    expect((await raw(server.url, `${pods}/p1`, { method: 'POST', body: pod('p1', 'crud') })).status).toBe(405);
    expect((await raw(server.url, '/api/v1/namespaces', { method: 'DELETE' })).json).toMatchObject({ code: 405, reason: 'MethodNotAllowed' });
    const proto = await raw(server.url, pods, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(proto.status).toBe(406);
    expect((await raw(server.url, pods, { headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' } })).status).toBe(200);
  });
});
