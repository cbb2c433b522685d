import {
  AppsV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, makeInformer, PatchStrategy, type V1ConfigMap, Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { pod } from './http-client.test-helper.ts';

/** A real Kubernetes client against the test API server: what works here works for clients in the field. */
let server: TestApiServer;
let kc: KubeConfig;

beforeAll(async () => {
  server = await startTestApiServer({ tls: true, auth: { tokens: { 'client-token': { username: 'agent', groups: [] } }, clientCertificates: true }, bookmarkIntervalMs: 0 });
  kc = new KubeConfig();
  kc.loadFromString(server.kubeconfigYaml());
  server.store.ensureNamespace('cn');
  for (let i = 0; i < 7; i++) server.store.create(pod(`p${i}`, 'cn', { app: i < 4 ? 'a' : 'b' }));
});
afterAll(async () => {
  await server.close();
});

function until<T>(check: () => T | undefined, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = (): void => {
      const v = check();
      if (v !== undefined) resolve(v);
      else if (Date.now() - started > 10_000) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

describe('@kubernetes/client-node against the test API server', () => {
  it('lists with paging and label selectors over HTTPS with a bearer token', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const first = await core.listNamespacedPod({ namespace: 'cn', limit: 3 });
    expect(first.items.map((p) => p.metadata?.name)).toEqual(['p0', 'p1', 'p2']);
    expect(first.metadata?.remainingItemCount).toBe(4);
    const next = await core.listNamespacedPod({ namespace: 'cn', limit: 10, _continue: first.metadata?._continue ?? '' });
    expect(next.items).toHaveLength(4);
    const selected = await core.listPodForAllNamespaces({ labelSelector: 'app=b' });
    expect(selected.items.map((p) => p.metadata?.name)).toEqual(['p4', 'p5', 'p6']);
  });

  it('creates, reads and gets typed errors back', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const cm: V1ConfigMap = { metadata: { name: 'cfg' }, data: { a: '1' } };
    const created = await core.createNamespacedConfigMap({ namespace: 'cn', body: cm });
    expect(created.metadata?.uid).toBeDefined();
    await expect(core.createNamespacedConfigMap({ namespace: 'cn', body: cm })).rejects.toMatchObject({ code: 409 });
    await expect(core.readNamespacedConfigMap({ namespace: 'cn', name: 'nope' })).rejects.toMatchObject({ code: 404 });
  });

  it('watches with bookmarks and resumes from a resourceVersion', async () => {
    const events: [string, string][] = [];
    const rv = String(server.store.resourceVersion);
    const w = new Watch(kc);
    const controller = await w.watch('/api/v1/namespaces/cn/pods', { resourceVersion: rv, allowWatchBookmarks: true }, (type, obj: { metadata?: { name?: string; resourceVersion?: string } }) => {
      events.push([type, type === 'BOOKMARK' ? (obj.metadata?.resourceVersion ?? '') : (obj.metadata?.name ?? '')]);
    }, () => {});
    server.store.create(pod('w1', 'cn'));
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'cn', name: 'w1' });
    server.faults.sendBookmarks();
    await until(() => (events.length >= 3 ? true : undefined), 'watch events');
    expect(events.slice(0, 3)).toEqual([['ADDED', 'w1'], ['MODIFIED', 'w1'], ['DELETED', 'w1']]);
    controller.abort();
  });

  it('runs an informer (list + watch) that keeps its cache current', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer(kc, '/api/v1/namespaces/cn/pods', () => core.listNamespacedPod({ namespace: 'cn' }));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    expect(informer.list('cn').map((p) => p.metadata?.name).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    server.store.create(pod('late', 'cn'));
    await until(() => informer.get('late', 'cn'), 'the informer to see the new pod');
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'cn', name: 'late' });
    await until(() => (informer.get('late', 'cn') === undefined ? true : undefined), 'the informer to drop the pod');
    await informer.stop();
  });

  it('applies with server-side apply through KubernetesObjectApi, with a client certificate', async () => {
    const certKc = new KubeConfig();
    certKc.loadFromString(server.kubeconfigYaml({ user: { username: 'deployer', groups: ['system:masters'] } }));
    const objects = KubernetesObjectApi.makeApiClient(certKc);
    const spec = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'applied', namespace: 'cn' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'applied' } }, template: { metadata: { labels: { app: 'applied' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } } },
    };
    const created = await objects.patch(spec, undefined, undefined, 'vendor-agent', true, PatchStrategy.ServerSideApply);
    expect((created as { metadata?: { managedFields?: unknown[] } }).metadata?.managedFields?.[0]).toMatchObject({ manager: 'vendor-agent', operation: 'Apply' });
    const scaled = await objects.patch({ ...spec, spec: { ...spec.spec, replicas: 4 } }, undefined, undefined, 'vendor-agent', true, PatchStrategy.ServerSideApply);
    expect((scaled as { spec?: { replicas?: number } }).spec?.replicas).toBe(4);
    expect(server.requests.log().some((r) => r.user === 'deployer' && r.verb === 'patch')).toBe(true);

    const apps = certKc.makeApiClient(AppsV1Api);
    const scale = await apps.readNamespacedDeploymentScale({ namespace: 'cn', name: 'applied' });
    expect(scale.spec?.replicas).toBe(4);
    const deleted = await objects.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'applied', namespace: 'cn' } }, undefined, undefined, undefined, undefined, 'Background');
    expect(deleted).toMatchObject({ kind: 'Status', status: 'Success' });
  });
});
