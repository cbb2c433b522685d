import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, deployment, raw, str } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer();
  server.store.ensureNamespace('ssa');
});
afterAll(async () => {
  await server.close();
});

const path = '/apis/apps/v1/namespaces/ssa/deployments';
const APPLY = 'application/apply-patch+yaml';

function applied(name: string, image: string, replicas?: number, extra: Record<string, string> = {}): string {
  const d = deployment(name, 'ssa');
  const spec = d.spec as Record<string, unknown>;
  if (replicas === undefined) delete spec.replicas;
  else spec.replicas = replicas;
  (at(d, 'spec.template.spec.containers.0') as Record<string, unknown>).image = image;
  (d.metadata as Record<string, unknown>).labels = { app: name, ...extra };
  return stringify(d);
}

function managers(obj: unknown): { manager: string; operation: string }[] {
  return (at(obj, 'metadata.managedFields') as { manager: string; operation: string }[]).map((m) => ({ manager: m.manager, operation: m.operation }));
}

describe('server-side apply', () => {
  it('creates with 201 and records the field manager with a FieldsV1 set', async () => {
    const res = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:1', 2, { tier: 'front' }), contentType: APPLY });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ metadata: { name: 'web', labels: { app: 'web', tier: 'front' } }, spec: { replicas: 2 } });
    const [entry] = at(res.json, 'metadata.managedFields') as Record<string, unknown>[];
    expect(entry).toMatchObject({ manager: 'deployer', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' });
    expect(at(entry, 'fieldsV1')).toMatchObject({
      'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} } },
      'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
  });

  it('requires a fieldManager for apply', async () => {
    const res = await raw(server.url, `${path}/web`, { method: 'PATCH', body: applied('web', 'nginx:1'), contentType: APPLY });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ reason: 'Invalid', details: { kind: 'PatchOptions', causes: [{ field: 'fieldManager' }] } });
  });

  it('updates in place, is a no-op when nothing changes, and removes fields the manager stopped applying', async () => {
    const first = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:2', 2, { tier: 'front' }), contentType: APPLY });
    expect(first.status).toBe(200);
    expect(at(first.json, 'spec.template.spec.containers.0.image')).toBe('nginx:2');
    const rv = str(first.json, 'metadata.resourceVersion');
    const again = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:2', 2, { tier: 'front' }), contentType: APPLY });
    expect(str(again.json, 'metadata.resourceVersion')).toBe(rv);
    const dropped = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:2', 2), contentType: APPLY });
    expect(at(dropped.json, 'metadata.labels')).toEqual({ app: 'web' });
  });

  it('answers 409 with FieldManagerConflict causes when another manager owns a changed field, and takes it over with force', async () => {
    const scale = await raw(server.url, `${path}/web?fieldManager=hpa`, { method: 'PATCH', body: { spec: { replicas: 5 } }, contentType: 'application/merge-patch+json' });
    expect(scale.status).toBe(200);
    expect(managers(scale.json)).toEqual(expect.arrayContaining([{ manager: 'deployer', operation: 'Apply' }, { manager: 'hpa', operation: 'Update' }]));

    const clash = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:3', 2), contentType: APPLY });
    expect(clash.status).toBe(409);
    expect(clash.json).toMatchObject({
      kind: 'Status', reason: 'Conflict', code: 409,
      message: 'Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "hpa" using apps/v1', field: '.spec.replicas' }] },
    });
    expect(at((await raw(server.url, `${path}/web`)).json, 'spec.template.spec.containers.0.image')).toBe('nginx:2');

    const shared = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:3', 5), contentType: APPLY });
    expect(shared.status).toBe(200);

    const forced = await raw(server.url, `${path}/web?fieldManager=deployer&force=true`, { method: 'PATCH', body: applied('web', 'nginx:3', 3), contentType: APPLY });
    expect(forced.status).toBe(200);
    expect(at(forced.json, 'spec.replicas')).toBe(3);
    expect(managers(forced.json)).not.toContainEqual({ manager: 'hpa', operation: 'Update' });
  });

  it('leaves out fields a manager omits but another owns', async () => {
    await raw(server.url, `${path}/web?fieldManager=labeller`, { method: 'PATCH', body: { metadata: { labels: { owner: 'ops' } } }, contentType: 'application/merge-patch+json' });
    const res = await raw(server.url, `${path}/web?fieldManager=deployer`, { method: 'PATCH', body: applied('web', 'nginx:3', 3), contentType: APPLY });
    expect(at(res.json, 'metadata.labels')).toEqual({ app: 'web', owner: 'ops' });
  });

  it('refuses an apply body without apiVersion/kind or naming another object', async () => {
    expect((await raw(server.url, `${path}/web?fieldManager=d`, { method: 'PATCH', body: 'metadata:\n  name: web\n', contentType: APPLY })).status).toBe(400);
    expect((await raw(server.url, `${path}/other?fieldManager=d`, { method: 'PATCH', body: applied('web', 'nginx:1'), contentType: APPLY })).status).toBe(400);
    expect((await raw(server.url, `${path}/web?fieldManager=d`, { method: 'PATCH', body: 'a: [', contentType: APPLY })).status).toBe(400);
  });
});

describe('patch types', () => {
  it('merges containers by name with a strategic merge patch, replaces them with a merge patch', async () => {
    server.store.create({ ...deployment('sm', 'ssa'), spec: { ...(deployment('sm', 'ssa').spec as object), template: { metadata: { labels: { app: 'sm' } }, spec: { containers: [{ name: 'app', image: 'a:1' }, { name: 'side', image: 's:1' }] } } } });
    const strategic = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: { spec: { template: { spec: { containers: [{ name: 'side', image: 's:2' }, { name: 'extra', image: 'e:1' }] } } } }, contentType: 'application/strategic-merge-patch+json' });
    expect(strategic.status).toBe(200);
    expect(at(strategic.json, 'spec.template.spec.containers')).toEqual([{ name: 'app', image: 'a:1' }, { name: 'side', image: 's:2' }, { name: 'extra', image: 'e:1' }]);
    const del = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: { spec: { template: { spec: { containers: [{ name: 'extra', $patch: 'delete' }] } } } }, contentType: 'application/strategic-merge-patch+json' });
    expect((at(del.json, 'spec.template.spec.containers') as unknown[]).length).toBe(2);
    const merge = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: { spec: { template: { spec: { containers: [{ name: 'only', image: 'o:1' }] } } } }, contentType: 'application/merge-patch+json' });
    expect(at(merge.json, 'spec.template.spec.containers')).toEqual([{ name: 'only', image: 'o:1' }]);
  });

  it('applies JSON patches with test, and refuses a failed test with 422', async () => {
    const ok = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: [{ op: 'test', path: '/spec/replicas', value: 1 }, { op: 'replace', path: '/spec/replicas', value: 4 }, { op: 'add', path: '/metadata/annotations', value: { a: 'b' } }], contentType: 'application/json-patch+json' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ spec: { replicas: 4 }, metadata: { annotations: { a: 'b' } } });
    const failed = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: [{ op: 'test', path: '/spec/replicas', value: 1 }], contentType: 'application/json-patch+json' });
    expect(failed.status).toBe(422);
    expect(failed.json).toMatchObject({ reason: 'Invalid' });
  });

  it('refuses a resourceVersion precondition in a patch that no longer holds, and unknown patch types', async () => {
    const stale = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: { metadata: { resourceVersion: '1' }, spec: { replicas: 9 } }, contentType: 'application/merge-patch+json' });
    expect(stale.status).toBe(409);
    const unknown = await raw(server.url, `${path}/sm`, { method: 'PATCH', body: {}, contentType: 'application/json' });
    expect(unknown.status).toBe(415);
    expect((await raw(server.url, `${path}/missing`, { method: 'PATCH', body: {}, contentType: 'application/merge-patch+json' })).status).toBe(404);
  });

  it('refuses strategic merge patches for custom resources with 415, as the real server does', async () => {
    server.store.create({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} } }] },
    });
    server.store.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ssa' }, spec: { size: 1 } });
    const res = await raw(server.url, '/apis/example.com/v1/namespaces/ssa/widgets/w', { method: 'PATCH', body: { spec: { size: 2 } }, contentType: 'application/strategic-merge-patch+json' });
    expect(res.status).toBe(415);
    expect(res.json).toMatchObject({ reason: 'UnsupportedMediaType' });
    const merge = await raw(server.url, '/apis/example.com/v1/namespaces/ssa/widgets/w', { method: 'PATCH', body: { spec: { size: 2 }, status: { ready: true } }, contentType: 'application/merge-patch+json' });
    expect(merge.json).toMatchObject({ spec: { size: 2 }, metadata: { generation: 2 } });
    expect(at(merge.json, 'status')).toBeUndefined();
    const status = await raw(server.url, '/apis/example.com/v1/namespaces/ssa/widgets/w/status', { method: 'PATCH', body: { status: { ready: true } }, contentType: 'application/merge-patch+json' });
    expect(status.json).toMatchObject({ status: { ready: true }, metadata: { generation: 2 } });
  });
});

describe('scale subresource', () => {
  it('reads and writes the replica count of deployments, stateful sets and replica sets as autoscaling/v1 Scale', async () => {
    for (const kind of ['deployments', 'statefulsets', 'replicasets']) {
      const base = `/apis/apps/v1/namespaces/ssa/${kind}`;
      const body = { ...deployment(`s-${kind}`, 'ssa', 2), kind: kind === 'deployments' ? 'Deployment' : kind === 'statefulsets' ? 'StatefulSet' : 'ReplicaSet' };
      expect((await raw(server.url, base, { method: 'POST', body })).status).toBe(201);
      const scale = await raw(server.url, `${base}/s-${kind}/scale`);
      expect(scale.json).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: `s-${kind}`, namespace: 'ssa' }, spec: { replicas: 2 }, status: { replicas: 0, selector: `app=s-${kind}` } });
      const put = await raw(server.url, `${base}/s-${kind}/scale`, { method: 'PUT', body: { ...(scale.json as object), spec: { replicas: 5 } } });
      expect(put.json).toMatchObject({ spec: { replicas: 5 } });
      const patched = await raw(server.url, `${base}/s-${kind}/scale`, { method: 'PATCH', body: { spec: { replicas: 7 } }, contentType: 'application/merge-patch+json' });
      expect(patched.json).toMatchObject({ spec: { replicas: 7 } });
      expect((await raw(server.url, `${base}/s-${kind}`)).json).toMatchObject({ spec: { replicas: 7 } });
      const stale = await raw(server.url, `${base}/s-${kind}/scale`, { method: 'PUT', body: scale.json });
      expect(stale.status).toBe(409);
    }
    expect((await raw(server.url, '/apis/apps/v1/namespaces/ssa/daemonsets/x/scale')).status).toBe(404);
  });

  it('serves the scale subresource a CRD declares', async () => {
    server.store.create({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'pools.example.com' },
      spec: {
        group: 'example.com', scope: 'Namespaced', names: { plural: 'pools', singular: 'pool', kind: 'Pool' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.ready', labelSelectorPath: '.status.selector' } } }],
      },
    });
    server.store.create({ apiVersion: 'example.com/v1', kind: 'Pool', metadata: { name: 'p', namespace: 'ssa' }, spec: { size: 2 }, status: { ready: 1, selector: 'pool=p' } });
    const base = '/apis/example.com/v1/namespaces/ssa/pools/p';
    expect((await raw(server.url, `${base}/scale`)).json).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { replicas: 1, selector: 'pool=p' } });
    await raw(server.url, `${base}/scale`, { method: 'PATCH', body: { spec: { replicas: 6 } }, contentType: 'application/merge-patch+json' });
    expect((await raw(server.url, base)).json).toMatchObject({ spec: { size: 6 }, status: { ready: 1 } });
  });
});
