import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { replacePodMetrics } from '../../shared/table/resources/pod-metrics.ts';
import { putCacheHealth } from '../../shared/table/resources/health.ts';
import { writeResources, type ResourceWrite } from '../../shared/table/resources/objects.ts';
import { updateAccount } from '../../shared/table/accounts/records.ts';
import { apiFixture, type ApiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import { resourcePageSchema, type ResourcePage } from '../../shared/answers/resources.ts';

const tables = useTestTables();

const put = (apiVersion: string, kind: string, namespace: string, name: string): ResourceWrite => {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  return {
    op: 'put',
    ref: { group, kind, namespace, name },
    resourceVersion: '7',
    object: JSON.stringify({ apiVersion, kind, metadata: { name, ...(namespace === '' ? {} : { namespace }) } }),
    at: 1_700_000_000_000,
  };
};

async function withResources(): Promise<ApiFixture> {
  const f = await apiFixture(tables, [{ name: 'prod' }, { name: 'empty' }]);
  await writeResources(f.table, 'prod', [
    ...Array.from({ length: 25 }, (_, i) => put('v1', 'Pod', i < 20 ? 'shop' : 'ops', `pod-${String(i).padStart(2, '0')}`)),
    put('apps/v1', 'Deployment', 'shop', 'web'),
    put('example.com/v1', 'Deployment', 'shop', 'web'),
    put('v1', 'Node', '', 'node-1'),
  ]);
  return f;
}

describe('GET /vendor/accounts/{accountId}/resources', () => {
  it('pages through every resource with a cursor', async () => {
    const f = await withResources();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await f.call('GET', `/vendor/accounts/prod/resources?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      // Each page is what the OpenAPI document and the console's types say it is.
      const page = v.parse(resourcePageSchema, res.json);
      seen.push(...page.items.map((i) => `${i.apiVersion}/${i.kind}/${i.namespace ?? ''}/${i.name}`));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toHaveLength(28);
    expect(new Set(seen).size).toBe(28);
    expect(pages).toBe(3);
  });

  it('answers objects a rogue agent stored nested too deeply, or not as JSON, as unreadable instead of failing', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    const stored = (name: string, object: string): ResourceWrite => ({ op: 'put', ref: { group: '', kind: 'ConfigMap', namespace: 'shop', name }, resourceVersion: '7', object, at: 1_700_000_000_000 });
    await writeResources(f.table, 'prod', [
      stored('deep', `{"apiVersion":"v1","kind":"ConfigMap","data":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
      stored('garbage', '{"apiVersion":'),
      stored('list', '[1,2]'),
      put('v1', 'ConfigMap', 'shop', 'fine'),
    ]);
    const res = await f.call('GET', '/vendor/accounts/prod/resources?kind=configmap');
    expect(res.status).toBe(200);
    const items = (res.json as unknown as ResourcePage).items.map((i) => [i.name, i.object]);
    expect(items).toEqual([
      ['deep', { unreadable: 'nested deeper than 256 levels' }],
      ['fine', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine', namespace: 'shop' } }],
      ['garbage', { unreadable: 'not a JSON object' }],
      ['list', { unreadable: 'not a JSON object' }],
    ]);
  });

  it('filters by kind (any case, or with its group), namespace and name', async () => {
    const f = await withResources();
    const pods = (await f.call('GET', '/vendor/accounts/prod/resources?kind=POD&namespace=ops')).json as unknown as ResourcePage;
    expect(pods.items.map((i) => i.name)).toEqual(['pod-20', 'pod-21', 'pod-22', 'pod-23', 'pod-24']);
    expect(pods.items[0]).toMatchObject({ apiVersion: 'v1', kind: 'Pod', namespace: 'ops', resourceVersion: '7', updatedAt: '2023-11-14T22:13:20.000Z', object: { metadata: { name: 'pod-20' } } });
    const deployments = (await f.call('GET', '/vendor/accounts/prod/resources?kind=deployment')).json as unknown as ResourcePage;
    expect(deployments.items.map((i) => i.apiVersion)).toEqual(['apps/v1', 'example.com/v1']);
    const apps = (await f.call('GET', '/vendor/accounts/prod/resources?kind=Deployment.apps&namespace=shop&name=web')).json as unknown as ResourcePage;
    expect(apps.items.map((i) => i.apiVersion)).toEqual(['apps/v1']);
    const byName = (await f.call('GET', '/vendor/accounts/prod/resources?name=web')).json as unknown as ResourcePage;
    expect(byName.items).toHaveLength(2);
    const node = (await f.call('GET', '/vendor/accounts/prod/resources?kind=node')).json as unknown as ResourcePage;
    expect(node.items).toEqual([expect.objectContaining({ name: 'node-1' })]);
    expect(node.items[0]?.namespace).toBeUndefined();
    expect(((await f.call('GET', '/vendor/accounts/empty/resources')).json as unknown as ResourcePage).items).toEqual([]);
  });

  it('answers 404 as problem+json for an unknown account', async () => {
    const f = await withResources();
    for (const path of ['/vendor/accounts/ghost/resources', '/vendor/accounts/ghost/cache', '/vendor/accounts/ghost/metrics']) {
      const res = await f.call('GET', path);
      expect(res.status).toBe(404);
      expect(res.type).toBe('application/problem+json');
      expect(res.json).toMatchObject({ code: 'not_found', detail: 'no account named "ghost"' });
    }
  });

  it('answers 400 naming every bad parameter', async () => {
    const f = await withResources();
    const res = await f.call('GET', '/vendor/accounts/prod/resources?limit=0&namespace=Not_A_Name&kind=a/b&colour=red&name=x&name=y');
    expect(res.status).toBe(400);
    expect(res.type).toBe('application/problem+json');
    expect((res.json.errors as { path: string }[]).map((e) => e.path).sort()).toEqual(['colour', 'kind', 'limit', 'name', 'namespace']);
    expect((await f.call('GET', '/vendor/accounts/prod/resources?limit=1001')).status).toBe(400);
    const cursor = Buffer.from('deployment#apps#shop#web').toString('base64url');
    const wrong = await f.call('GET', `/vendor/accounts/prod/resources?kind=pod&cursor=${cursor}`);
    expect(wrong.status).toBe(400);
    expect(wrong.json).toMatchObject({ errors: [{ path: 'cursor' }] });
    expect((await f.call('GET', '/vendor/accounts/prod/resources?cursor=not*base64')).status).toBe(400);
    expect((await f.call('GET', '/vendor/accounts/prod/cache?x=1')).status).toBe(400);
  });
});

describe('GET /vendor/accounts/{accountId}/cache', () => {
  it('serves the last health report with ages from now, and an empty one before any', async () => {
    const f = await withResources();
    const empty = await f.call('GET', '/vendor/accounts/prod/cache');
    expect(empty.json).toEqual({ account: 'prod', cachingAgentId: null, cachingEpoch: null, reportedBy: null, reportedAt: null, kinds: [] });
    await updateAccount(f.table, 'prod', 1, { cachingAgentId: 'agent-1', cachingEpoch: 3 }, 1);
    const now = f.clock.now();
    await putCacheHealth(f.table, 'prod', {
      agentId: 'agent-1',
      cachingEpoch: 3,
      at: now - 5000,
      kinds: [
        { group: '', kind: 'Pod', scopes: 1, watching: 1, objects: 25, lastEventAt: now - 2000, relists: 1, expired: 0 },
        { group: '', kind: 'ConfigMap', scopes: 1, watching: 0, objects: 0, relists: 3, expired: 1, lastError: 'GET /api/v1/configmaps: 500', lastErrorAt: now - 1000 },
      ],
    });
    const res = await f.call('GET', '/vendor/accounts/prod/cache');
    expect(res.json).toEqual({
      account: 'prod',
      cachingAgentId: 'agent-1',
      cachingEpoch: 3,
      reportedBy: 'agent-1',
      reportedAt: new Date(now - 5000).toISOString(),
      kinds: [
        { kind: 'Pod', group: '', scopes: 1, watching: 1, objects: 25, lastEventAgeMs: 2000, relists: 1, expired: 0, lastError: null, lastErrorAgeMs: null },
        { kind: 'ConfigMap', group: '', scopes: 1, watching: 0, objects: 0, lastEventAgeMs: null, relists: 3, expired: 1, lastError: 'GET /api/v1/configmaps: 500', lastErrorAgeMs: 1000 },
      ],
    });
  });
});

describe('GET /vendor/accounts/{accountId}/metrics', () => {
  it('serves the latest pod metrics, by namespace when asked', async () => {
    const f = await withResources();
    const pod = (namespace: string, name: string) => ({ namespace, name, timestamp: '2024-05-01T10:00:00Z', window: '30s', containers: [{ name: 'app', cpu: '12m', memory: '34Mi' }] });
    await replacePodMetrics(f.table, 'prod', [
      { namespace: 'shop', pods: [pod('shop', 'b'), pod('shop', 'a')], at: f.clock.now() },
      { namespace: 'ops', pods: [pod('ops', 'c')], at: f.clock.now() },
    ]);
    const all = await f.call('GET', '/vendor/accounts/prod/metrics');
    expect(all.json).toEqual({ account: 'prod', storedAt: new Date(f.clock.now()).toISOString(), pods: [pod('ops', 'c'), pod('shop', 'a'), pod('shop', 'b')] });
    const shop = await f.call('GET', '/vendor/accounts/prod/metrics?namespace=shop');
    expect((shop.json.pods as unknown[]).length).toBe(2);
    expect((await f.call('GET', '/vendor/accounts/empty/metrics')).json).toEqual({ account: 'empty', storedAt: null, pods: [] });
  });
});
