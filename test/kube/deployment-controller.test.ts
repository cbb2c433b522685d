import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { deployment, raw } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer({ deploymentController: true });
});
afterAll(async () => {
  await server.close();
});

const base = '/apis/apps/v1/namespaces/default/deployments';

function replicaSets(): { name: string; revision: string; replicas: unknown }[] {
  return server.store.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'default' })
    .map((rs) => ({ name: rs.metadata.name ?? '', revision: rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '', replicas: (rs.spec as { replicas?: unknown }).replicas }))
    .sort((a, b) => Number(a.revision) - Number(b.revision));
}

async function setImage(image: string): Promise<void> {
  const res = await raw(server.url, `${base}/web`, {
    method: 'PATCH', contentType: 'application/strategic-merge-patch+json',
    body: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
  });
  expect(res.status).toBe(200);
  await server.settled();
}

describe('stand-in deployment controller', () => {
  it('makes a ReplicaSet per template with revisions, scales old ones to 0, and reuses one on rollback', async () => {
    expect((await raw(server.url, base, { method: 'POST', body: deployment('web', 'default', 3) })).status).toBe(201);
    await server.settled();
    const [first] = replicaSets();
    expect(first).toMatchObject({ revision: '1', replicas: 3 });
    const rs = server.store.get({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'default', name: first?.name ?? '' });
    expect(rs?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web', controller: true });
    expect(rs?.metadata.labels?.['pod-template-hash']).toBe(first?.name.slice('web-'.length));
    const dep = await raw(server.url, `${base}/web`);
    expect(dep.json).toMatchObject({
      metadata: { annotations: { 'deployment.kubernetes.io/revision': '1' } },
      status: { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3, conditions: [{ type: 'Available', status: 'True' }, { type: 'Progressing', status: 'True' }] },
    });

    await setImage('nginx:2');
    expect(replicaSets().map((r) => [r.revision, r.replicas])).toEqual([['1', 0], ['2', 3]]);
    await setImage('nginx:1.25');
    const afterRollback = replicaSets();
    expect(afterRollback).toHaveLength(2);
    expect(afterRollback.map((r) => [r.revision, r.replicas])).toEqual([['2', 0], ['3', 3]]);
    expect(afterRollback[1]?.name).toBe(first?.name);

    await raw(server.url, `${base}/web/scale`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { replicas: 5 } } });
    await server.settled();
    expect(replicaSets().at(-1)?.replicas).toBe(5);
    expect((await raw(server.url, `${base}/web`)).json).toMatchObject({ status: { replicas: 5, observedGeneration: 4 } });

    await raw(server.url, `${base}/web`, { method: 'DELETE' });
    await server.settled();
    expect(replicaSets()).toEqual([]);
  });

  it('is off by default, as on a cluster without controller-manager', async () => {
    const plain = await startTestApiServer();
    try {
      plain.store.create(deployment('web', 'default'));
      await plain.settled();
      expect(plain.store.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet' })).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
