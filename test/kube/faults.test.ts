import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/manual-clock.ts';
import { churn, seedCluster, startTestApiServer, type TestApiServer } from './index.ts';
import { items, pod, raw, watch } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer({ admin: true });
  server.store.ensureNamespace('f');
});
afterAll(async () => {
  await server.close();
});

/** Resolves with the socket error of a request whose connection is cut, or the status if answered. */
function outcome(path: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request(server.url + path, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

describe('fault knobs', () => {
  it('answers the next N matching requests with 429 and Retry-After, then recovers', async () => {
    server.faults.fail({ verb: 'list', resource: 'pods' }, 429, 2, { retryAfterSeconds: 3 });
    const first = await raw(server.url, '/api/v1/namespaces/f/pods');
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('3');
    expect(first.json).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests, please try again later.',
      reason: 'TooManyRequests', details: { retryAfterSeconds: 3 }, code: 429,
    });
    expect((await raw(server.url, '/api/v1/namespaces/f/configmaps')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/pods')).status).toBe(429);
    expect((await raw(server.url, '/api/v1/pods')).status).toBe(200);
  });

  it('answers 500 and 504 Status bodies', async () => {
    server.faults.fail({ verb: 'get' }, 500);
    server.faults.fail({ verb: 'create' }, 504);
    const e500 = await raw(server.url, '/api/v1/namespaces/f');
    expect(e500.json).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: injected fault' });
    const e504 = await raw(server.url, '/api/v1/namespaces/f/pods', { method: 'POST', body: pod('x', 'f') });
    expect(e504.json).toMatchObject({ code: 504, reason: 'Timeout' });
    expect(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'f', name: 'x' })).toBeUndefined();
  });

  it('cuts the connection, or never answers, for matching requests', async () => {
    server.faults.closeConnection({ path: '/api/v1/namespaces/f/secrets' });
    expect(await outcome('/api/v1/namespaces/f/secrets', 5000)).toBe('ECONNRESET');
    server.faults.hang({ resource: 'secrets' });
    expect(await outcome('/api/v1/namespaces/f/secrets', 300)).toBe('timeout');
    expect(await outcome('/api/v1/namespaces/f/secrets', 5000)).toBe('200');
  });

  it('adds latency to matching requests until cleared', async () => {
    const clock = new ManualClock(Date.parse('2024-05-01T00:00:00Z'));
    const slow = await startTestApiServer({ clock });
    try {
      slow.faults.latency(150, { resource: 'services' });
      let answered = false;
      const pending = raw(slow.url, '/api/v1/namespaces/default/services').then((r) => {
        answered = true;
        return r;
      });
      expect((await raw(slow.url, '/api/v1/namespaces/default/configmaps')).status).toBe(200);
      while (clock.pendingSleeps === 0) await new Promise((r) => setImmediate(r));
      expect(answered).toBe(false);
      await clock.advance(150);
      expect((await pending).status).toBe(200);
      slow.faults.clear();
      expect((await raw(slow.url, '/api/v1/namespaces/default/services')).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it('closes every socket, watches included', async () => {
    const w = await watch(server.url, `/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    expect(server.faults.closeSockets()).toBeGreaterThanOrEqual(1);
    await w.ended;
  });

  it('records requests so tests can count lists and watches', async () => {
    server.requests.clear();
    await raw(server.url, '/api/v1/namespaces/f/pods?limit=5');
    await raw(server.url, '/apis/apps/v1/deployments');
    expect(server.requests.count({ verb: 'list', resource: 'pods' })).toBe(1);
    expect(server.requests.count({ verb: 'list' })).toBe(2);
    expect(server.requests.log()[0]).toMatchObject({ method: 'GET', verb: 'list', resource: 'pods', namespace: 'f', query: '?limit=5', code: 200 });
  });

  it('matches faults and counts by query parameters, each with exactly the value given', async () => {
    server.requests.clear();
    server.faults.fail({ verb: 'list', resource: 'pods', query: { limit: '1' } }, 500, 1);
    // limit=10 is not limit=1: the rule waits for the request it names.
    expect((await raw(server.url, '/api/v1/namespaces/f/pods?limit=10')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/namespaces/f/pods?limit=1&labelSelector=a%3Db')).status).toBe(500);
    expect((await raw(server.url, '/api/v1/namespaces/f/pods?limit=1')).status).toBe(200);
    expect(server.requests.count({ verb: 'list', query: { limit: '1' } })).toBe(2);
    expect(server.requests.count({ verb: 'list', query: { limit: '1', labelSelector: 'a=b' } })).toBe(1);
    expect(server.requests.count({ query: { limit: '10' } })).toBe(1);
  });
});

describe('pod metrics', () => {
  it('serves PodMetrics set by the test, per namespace and for all, with the pod labels', async () => {
    server.store.create(pod('m1', 'f', { app: 'shop' }));
    server.podMetrics.set('f', 'm1', [{ name: 'app', usage: { cpu: '12m', memory: '34Mi' } }]);
    server.podMetrics.set('default', 'm2', [{ name: 'app', usage: { cpu: '1m', memory: '1Mi' } }], { app: 'other' });
    const list = await raw(server.url, '/apis/metrics.k8s.io/v1beta1/namespaces/f/pods');
    expect(list.json).toMatchObject({
      kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1',
      items: [{ metadata: { name: 'm1', namespace: 'f', labels: { app: 'shop' } }, window: '30s', containers: [{ name: 'app', usage: { cpu: '12m', memory: '34Mi' } }] }],
    });
    expect(items((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/pods')).json)).toHaveLength(2);
    expect(items((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dother')).json)).toHaveLength(1);
    expect((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/namespaces/f/pods/m1')).json).toMatchObject({ kind: 'PodMetrics', metadata: { name: 'm1' } });
    expect((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/namespaces/f/pods/none')).json).toMatchObject({ code: 404, message: 'podmetrics.metrics.k8s.io "none" not found' });
  });
});

describe('admin endpoints', () => {
  it('drives faults, compaction, metrics and seeding over /_test/', async () => {
    const fault = await raw(server.url, '/_test/faults', { method: 'POST', body: { match: { verb: 'list', resource: 'nodes' }, times: 1, action: { type: 'status', code: 429, retryAfterSeconds: 2 } } });
    expect(fault.status).toBe(200);
    expect((await raw(server.url, '/api/v1/nodes')).status).toBe(429);

    const compact = await raw(server.url, '/_test/compact', { method: 'POST', body: {} });
    expect(compact.json).toEqual({ compactedResourceVersion: server.store.resourceVersion });
    const before = server.store.resourceVersion;
    const expire = await raw(server.url, '/_test/history/expire', { method: 'POST' });
    expect(expire.json).toEqual({ compactedResourceVersion: before + 1 });
    expect(server.store.compactedResourceVersion).toBe(before + 1);

    await raw(server.url, '/_test/metrics/api', { method: 'POST', body: { enabled: false } });
    expect((await raw(server.url, '/apis/metrics.k8s.io/v1beta1/pods')).status).toBe(404);
    await raw(server.url, '/_test/metrics/api', { method: 'POST', body: { enabled: true } });

    const seeded = await raw(server.url, '/_test/seed', { method: 'POST', body: { objects: 200, namespaces: 4, namespacePrefix: 'seed-' } });
    expect(seeded.json).toMatchObject({ namespaces: ['seed-000', 'seed-001', 'seed-002', 'seed-003'] });
    const stats = await raw(server.url, '/_test/stats');
    expect(stats.json).toMatchObject({ objects: { '/pods': expect.any(Number), 'apps/deployments': 16, 'apps/replicasets': 30 } });
    const churned = await raw(server.url, '/_test/churn', { method: 'POST', body: { count: 50 } });
    expect(churned.json).toMatchObject({ updated: 50 });

    const bad = await raw(server.url, '/_test/faults', { method: 'POST', body: { action: { type: 'status', code: 200 } } });
    expect(bad.status).toBe(400);
    expect((await raw(server.url, '/_test/nothing')).status).toBe(404);
  });
});

describe('paced churn', () => {
  it('waits for a watcher that does not read instead of piling up past the slow-watcher limit', async () => {
    const paced = await startTestApiServer({ admin: true });
    try {
      await seedCluster(paced.store, { objects: 200, namespaces: 2 });
      const from = paced.store.resourceVersion;
      // 12,000 updates of pods of about 6 KB: about 70 MB, beyond the 64 MiB a watcher may leave unread.
      const count = 12_000;
      let lines = 0;
      let reading: (() => void) | undefined;
      const received = new Promise<number>((resolve, reject) => {
        const req = request(`${paced.url}/api/v1/pods?watch=1&resourceVersion=${from}`, (res) => {
          res.pause();
          reading = () => res.resume();
          res.on('data', (chunk: Buffer) => {
            for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
            if (lines >= count) {
              res.destroy();
              resolve(lines);
            }
          });
          res.on('end', () => resolve(lines));
        });
        req.on('error', reject);
        req.end();
      });
      while (reading === undefined) await new Promise((r) => setTimeout(r, 5));
      const churned = raw(paced.url, '/_test/churn', { method: 'POST', body: { count, batch: 500, paced: true } });
      // Let the unread backlog build up well past the pace limit before the watcher reads.
      while (paced.store.resourceVersion - from < 3000) await new Promise((r) => setTimeout(r, 5));
      reading();
      expect(await received).toBe(count);
      expect((await churned).json).toMatchObject({ updated: count });
    } finally {
      await paced.close();
    }
  });

  it('makes one batch at a time while told the watchers are behind', async () => {
    const local = await startTestApiServer();
    try {
      await seedCluster(local.store, { objects: 100, namespaces: 1 });
      const from = local.store.resourceVersion;
      let asked = 0;
      let behind = true;
      const done = churn(local.store, { count: 50, batch: 10, behind: () => (asked++, behind) });
      while (asked < 3) await new Promise((r) => setTimeout(r, 1));
      expect(local.store.resourceVersion - from).toBe(10);
      behind = false;
      expect(await done).toMatchObject({ updated: 50 });
      expect(local.store.resourceVersion - from).toBe(50);
    } finally {
      await local.close();
    }
  });

  it('goes on from the objects it left when the store did not change since, and reads them again when it did', async () => {
    const local = await startTestApiServer();
    try {
      await seedCluster(local.store, { objects: 100, namespaces: 1 });
      const pods = local.store.list({ apiVersion: 'v1', kind: 'Pod' });
      expect(await churn(local.store, { count: pods.length })).toMatchObject({ updated: pods.length });
      // Unchanged since: every update of the second round is one more on the state the first left.
      const second = await churn(local.store, { count: pods.length });
      expect(second).toMatchObject({ updated: pods.length, toResourceVersion: second.fromResourceVersion + pods.length });
      for (const p of local.store.list({ apiVersion: 'v1', kind: 'Pod' })) {
        expect(p.status).toMatchObject({ observedGeneration: expect.any(Number) });
        expect(p.metadata.annotations?.['example.com/heartbeat']).toBe(String(second.fromResourceVersion + pods.findIndex((q) => q.metadata.name === p.metadata.name)));
      }
      // A change made between two rounds is read again, not overwritten by the round's old copy.
      const first = pods[0]!;
      const ref = { apiVersion: 'v1', kind: 'Pod', namespace: first.metadata.namespace ?? '', name: first.metadata.name ?? '' };
      local.store.patch(ref, { metadata: { labels: { changed: 'between' } } });
      expect(await churn(local.store, { count: pods.length })).toMatchObject({ updated: pods.length });
      expect(local.store.get(ref)?.metadata.labels).toMatchObject({ changed: 'between' });
    } finally {
      await local.close();
    }
  });

  it('refuses a pace that is not a boolean', async () => {
    const bad = await raw(server.url, '/_test/churn', { method: 'POST', body: { count: 1, paced: 'yes' } });
    expect(bad.status).toBe(400);
  });
});

describe('requests in flight', () => {
  it('counts the matching requests being answered, now and at their most', async () => {
    server.requests.clear();
    server.faults.latency(1000, { verb: 'list', resource: 'configmaps' });
    try {
      const lists = [1, 2, 3].map(() => raw(server.url, '/api/v1/namespaces/f/configmaps'));
      await raw(server.url, '/api/v1/namespaces/f/pods');
      await expect.poll(() => server.requests.inFlight({ verb: 'list', resource: 'configmaps' })).toBe(3);
      await Promise.all(lists);
      server.faults.clear();
      expect(server.requests.inFlight({ verb: 'list' })).toBe(0);
      expect(server.requests.peakInFlight({ verb: 'list', resource: 'configmaps' })).toBe(3);
      expect(server.requests.peakInFlight({ verb: 'list', resource: 'pods' })).toBe(1);
      // One after another never overlaps.
      server.requests.clear();
      for (let i = 0; i < 2; i++) await raw(server.url, '/api/v1/namespaces/f/configmaps');
      expect(server.requests.peakInFlight({ verb: 'list', resource: 'configmaps' })).toBe(1);
      // A watch is in flight until it ends.
      const w = await watch(server.url, '/api/v1/namespaces/f/pods?watch=1');
      expect(server.requests.inFlight({ verb: 'watch', resource: 'pods' })).toBe(1);
      w.close();
      await expect.poll(() => server.requests.inFlight({ verb: 'watch', resource: 'pods' })).toBe(0);
    } finally {
      server.faults.clear();
    }
  });
});
