import { type IncomingMessage, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, pod, raw, str, watch } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer({ bookmarkIntervalMs: 0, tooLargeResourceVersionWaitMs: 50 });
  server.store.ensureNamespace('w');
  server.store.ensureNamespace('quiet');
});
afterAll(async () => {
  await server.close();
});

const podRef = (name: string, namespace = 'w') => ({ apiVersion: 'v1', kind: 'Pod', namespace, name });

describe('watch', () => {
  it('streams newline-delimited {type, object} events as application/json from a resourceVersion', async () => {
    const rv = server.store.resourceVersion;
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/json');
    expect(w.headers['transfer-encoding']).toBe('chunked');
    server.store.create(pod('a', 'w'));
    server.store.patch(podRef('a'), { metadata: { labels: { v: '2' } } });
    server.store.create(pod('elsewhere', 'quiet'));
    server.store.delete(podRef('a'));
    const events = [await w.next(), await w.next(), await w.next(), await w.next()];
    // A pod's deletion is graceful: first marked (MODIFIED, zero grace period as for a pod never scheduled), then gone.
    expect(events.map((e) => e?.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    expect(events[1]?.object).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a', labels: { v: '2' } } });
    expect(events[2]?.object).toMatchObject({ metadata: { name: 'a', deletionGracePeriodSeconds: 0 } });
    const deletedRv = Number(str(events[3]?.object, 'metadata.resourceVersion'));
    expect(deletedRv).toBe(server.store.resourceVersion);
    expect(w.lines[0]?.startsWith('{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"w"')).toBe(true);
    w.close();
  });

  it('resumes from an older resourceVersion with exactly the events after it', async () => {
    server.store.create(pod('r1', 'w'));
    const from = server.store.resourceVersion;
    server.store.create(pod('r2', 'w'));
    server.store.patch(podRef('r1'), { metadata: { labels: { x: 'y' } } });
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=true&resourceVersion=${from}`);
    const a = await w.next();
    const b = await w.next();
    expect([a?.type, str(a?.object, 'metadata.name'), b?.type, str(b?.object, 'metadata.name')]).toEqual(['ADDED', 'r2', 'MODIFIED', 'r1']);
    w.close();
  });

  it('sends an ERROR event with a 410 Expired Status and ends when the resourceVersion is compacted', async () => {
    const old = server.store.resourceVersion;
    server.store.create(pod('c1', 'w'));
    server.faults.compact();
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${old}`);
    expect(w.status).toBe(200);
    const e = await w.next();
    expect(e).toEqual({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${old} (${server.store.compactedResourceVersion})`, reason: 'Expired', code: 410 },
    });
    await w.ended;
    expect(await w.next()).toBeUndefined();
  });

  it('expires the newest version too with faults.expireHistory(), as a compaction after another write does', async () => {
    server.store.create(pod('e1', 'w'));
    const newest = server.store.resourceVersion;
    const compacted = server.faults.expireHistory();
    expect(compacted).toBe(newest + 1);
    expect(server.store.compactedResourceVersion).toBe(compacted);
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${newest}`);
    expect(await w.next()).toMatchObject({ type: 'ERROR', object: { code: 410, message: `too old resource version: ${newest} (${compacted})` } });
    await w.ended;
    const list = await raw(server.url, `/api/v1/namespaces/w/pods?resourceVersion=${newest}&resourceVersionMatch=Exact`);
    expect(list.status).toBe(410);
    // The version the expiry moved to is a valid starting point, and nothing changed for it.
    const fresh = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${compacted}`);
    server.store.create(pod('e2', 'w'));
    expect(await fresh.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'e2', resourceVersion: String(compacted + 1) } } });
    fresh.close();
  });

  it('answers a plain watch from a version it has not reached with silence, then the events after that version', async () => {
    const ahead = server.store.resourceVersion + 2;
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${ahead}`);
    expect(w.status).toBe(200);
    server.store.create(pod('a1', 'w'));
    server.store.create(pod('a2', 'w'));
    server.store.create(pod('a3', 'w'));
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a3' } } });
    expect(w.lines).toHaveLength(1);
    w.close();
  });

  it('expires only the compacted kind when one kind is compacted alone', async () => {
    const from = server.store.resourceVersion;
    server.store.create(pod('k1', 'w'));
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k2', namespace: 'w' } });
    server.faults.compact(undefined, { apiVersion: 'v1', kind: 'Pod' });
    expect(server.store.compactedFor('v1', 'Pod')).toBe(server.store.resourceVersion);
    const pods = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${from}`);
    expect(await pods.next()).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    const cms = await watch(server.url, `/api/v1/namespaces/w/configmaps?watch=1&resourceVersion=${from}`);
    expect(await cms.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'k2' } } });
    cms.close();
    expect((await raw(server.url, `/api/v1/namespaces/w/pods?resourceVersion=${from}&resourceVersionMatch=Exact`)).status).toBe(410);
    expect((await raw(server.url, `/api/v1/namespaces/w/configmaps?resourceVersion=${from}&resourceVersionMatch=Exact`)).status).toBe(200);
  });

  it('without a resourceVersion sends the current state as ADDED events and then changes', async () => {
    // Bookmarks allowed, yet no initial-events-end bookmark: that ends WatchList requests only.
    const w = await watch(server.url, '/api/v1/namespaces/w/pods?watch=1&allowWatchBookmarks=true');
    const initial = await w.until((e) => str(e.object, 'metadata.name') === 'r2');
    expect(initial.every((e) => e.type === 'ADDED')).toBe(true);
    server.store.create(pod('after', 'w'));
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after' } } });
    w.close();
  });

  it('WatchList: initial ADDED events, then a BOOKMARK annotated initial-events-end at the list resourceVersion', async () => {
    const rv = server.store.resourceVersion;
    const w = await watch(server.url, '/api/v1/namespaces/w/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
    const events = await w.until((e) => e.type === 'BOOKMARK');
    const bookmark = events.at(-1);
    expect(events.slice(0, -1).every((e) => e.type === 'ADDED')).toBe(true);
    expect(events.slice(0, -1).map((e) => str(e.object, 'metadata.name')).sort()).toEqual(
      server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'w' }).map((p) => p.metadata.name).sort(),
    );
    expect(bookmark?.object).toEqual({
      kind: 'Pod', apiVersion: 'v1',
      metadata: { resourceVersion: String(rv), creationTimestamp: null, annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    server.store.create(pod('wl', 'w'));
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'wl' } } });
    w.close();
  });

  it('validates WatchList options as kube-apiserver does', async () => {
    const noMatch = await raw(server.url, '/api/v1/pods?watch=1&sendInitialEvents=true');
    expect(noMatch.status).toBe(422);
    expect(noMatch.json).toMatchObject({ details: { kind: 'ListOptions', causes: [{ message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' }] } });
    const matchOnly = await raw(server.url, '/api/v1/pods?watch=1&resourceVersionMatch=NotOlderThan');
    expect(matchOnly.status).toBe(422);
  });

  it('answers like Kubernetes 1.20 when WatchList is off: resourceVersionMatch refused for watch', async () => {
    const old = await startTestApiServer({ watchList: false, bookmarkIntervalMs: 0 });
    try {
      const res = await raw(old.url, '/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
      expect(res.status).toBe(422);
      expect(res.json).toMatchObject({
        reason: 'Invalid',
        details: {
          causes: [
            { field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden for watch' },
            { field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided' },
          ],
        },
      });
      const withRv = await raw(old.url, '/api/v1/pods?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan');
      expect(withRv.json).toMatchObject({ details: { causes: [{ message: 'Forbidden: resourceVersionMatch is forbidden for watch' }] } });
      expect((withRv.json as { details: { causes: unknown[] } }).details.causes).toHaveLength(1);
    } finally {
      await old.close();
    }
  });

  it('sends BOOKMARKs with the newest resourceVersion only to watches that allow them', async () => {
    const rv = server.store.resourceVersion;
    const withBookmarks = await watch(server.url, `/api/v1/namespaces/quiet/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const without = await watch(server.url, `/api/v1/namespaces/quiet/configmaps?watch=1&resourceVersion=${rv}`);
    server.faults.sendBookmarks();
    server.store.create(pod('elsewhere-2', 'w'));
    server.faults.sendBookmarks();
    const b = await withBookmarks.next();
    expect(b).toEqual({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: String(server.store.resourceVersion), creationTimestamp: null } } });
    server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'quiet' } });
    expect((await without.next())?.type).toBe('ADDED');
    expect(without.lines).toHaveLength(1);
    withBookmarks.close();
    without.close();
  });

  it('with watchCacheProgress off, bookmarks only follow an event of the watched kind and carry its version', async () => {
    const old = await startTestApiServer({ watchCacheProgress: false, bookmarkIntervalMs: 0 });
    try {
      old.store.ensureNamespace('q');
      const rv = old.store.resourceVersion;
      const w = await watch(old.url, `/api/v1/namespaces/q/secrets?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`);
      old.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other-kind', namespace: 'q' } });
      old.faults.sendBookmarks();
      const secret = old.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'elsewhere', namespace: 'default' } });
      old.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later', namespace: 'q' } });
      old.faults.sendBookmarks();
      old.faults.sendBookmarks();
      expect(await w.next()).toEqual({
        type: 'BOOKMARK', object: { kind: 'Secret', apiVersion: 'v1', metadata: { resourceVersion: secret.metadata.resourceVersion, creationTimestamp: null } },
      });
      expect(w.lines).toHaveLength(1);
      w.close();
    } finally {
      await old.close();
    }
  });

  it('ends the stream after timeoutSeconds, with a last bookmark, and sends bookmarks on its interval', async () => {
    const clock = new ManualClock(Date.parse('2024-05-01T00:00:00Z'));
    const timed = await startTestApiServer({ clock, bookmarkIntervalMs: 1000 });
    try {
      const rv = timed.store.resourceVersion;
      const w = await watch(timed.url, `/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=30&allowWatchBookmarks=true&resourceVersion=${rv}`);
      timed.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tick', namespace: 'default' } });
      await clock.advance(1000);
      expect(await w.next()).toMatchObject({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(rv + 1) } } });
      await clock.advance(28_000);
      timed.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tock', namespace: 'default' } });
      await clock.advance(1000);
      expect(await w.next()).toMatchObject({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(rv + 2) } } });
      await w.ended;
      expect(w.lines).toHaveLength(2);
    } finally {
      await timed.close();
    }
  });

  it('turns selector transitions into ADDED and DELETED for a selector watch', async () => {
    server.store.create(pod('sel', 'w', { tier: 'db' }));
    const w = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&labelSelector=tier%3Dweb&resourceVersion=${server.store.resourceVersion}`);
    server.store.patch(podRef('sel'), { metadata: { labels: { tier: 'web' } } });
    server.store.patch(podRef('sel'), { metadata: { labels: { extra: '1' } } });
    server.store.patch(podRef('sel'), { metadata: { labels: { tier: 'db' } } });
    const types = [await w.next(), await w.next(), await w.next()].map((e) => e?.type);
    expect(types).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    w.close();
  });

  it('watches one object by name and by metadata.name field selector, across all namespaces', async () => {
    const rv = server.store.resourceVersion;
    const byName = await watch(server.url, `/api/v1/namespaces/w/pods/sel?watch=1&resourceVersion=${rv}`);
    const all = await watch(server.url, `/api/v1/pods?watch=1&fieldSelector=metadata.name%3Dsel&resourceVersion=${rv}`);
    server.store.create(pod('sel', 'quiet'));
    server.store.patch(podRef('sel'), { metadata: { labels: { touched: 'yes' } } });
    expect(await byName.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { namespace: 'w' } } });
    expect((await all.next())?.object).toMatchObject({ metadata: { namespace: 'quiet' } });
    expect((await all.next())?.object).toMatchObject({ metadata: { namespace: 'w' } });
    byName.close();
    all.close();
  });

  it('can drop watches (clean end or cut) and make them silent', async () => {
    const rv = server.store.resourceVersion;
    const a = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${rv}`);
    const b = await watch(server.url, `/api/v1/namespaces/quiet/pods?watch=1&resourceVersion=${rv}`);
    expect(server.faults.dropWatches({ namespace: 'w' })).toBe(1);
    await a.ended;
    const silent = await watch(server.url, `/api/v1/namespaces/w/pods?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`);
    expect(server.faults.silenceWatches({ resource: 'pods', namespace: 'w' })).toBe(1);
    const control = await watch(server.url, `/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`);
    server.store.create(pod('unheard', 'w'));
    server.faults.sendBookmarks();
    expect(await control.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'unheard' } } });
    expect(silent.lines).toEqual([]);
    expect(server.faults.dropWatches({ resource: 'pods' }, 'destroy')).toBe(3);
    await b.ended;
    await silent.ended;
    await control.ended;
  });

  it('paces a large catch-up by the client, but closes a live watcher that stops reading', async () => {
    const small = await startTestApiServer({ bookmarkIntervalMs: 0, maxWatchBufferBytes: 64 * 1024 });
    try {
      const blob = 'x'.repeat(20_000);
      for (let i = 0; i < 300; i++) small.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}`, namespace: 'default' }, data: { blob } });
      const list = await watch(small.url, '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
      const initial = await list.until((e) => e.type === 'BOOKMARK');
      expect(initial.filter((e) => e.type === 'ADDED')).toHaveLength(300);
      list.close();

      const stalled = await new Promise<IncomingMessage>((resolve) => {
        request(`${small.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${small.store.resourceVersion}`, resolve).end();
      });
      stalled.pause();
      for (let i = 0; i < 300; i++) small.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: `big-${i}` }, { data: { n: String(i) } });
      let lines = 0;
      stalled.on('data', (chunk: Buffer) => {
        lines += chunk.toString().split('\n').length - 1;
      });
      await new Promise((resolve) => stalled.on('end', resolve).resume());
      expect(lines).toBeLessThan(300);
      expect(small.faults.openWatches).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('serves a legacy /watch/ path', async () => {
    const w = await watch(server.url, `/api/v1/watch/namespaces/w/pods?resourceVersion=${server.store.resourceVersion}`);
    server.store.create(pod('legacy', 'w'));
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'legacy' } } });
    w.close();
  });

  it('rewrites apiVersion for a custom resource watched at a non-storage version', async () => {
    server.store.create({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'things.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'things', singular: 'thing', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }] },
    });
    const w = await watch(server.url, `/apis/example.com/v1beta1/namespaces/w/things?watch=1&resourceVersion=${server.store.resourceVersion}&allowWatchBookmarks=true`);
    server.store.create({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't', namespace: 'w' } });
    expect((await w.next())?.object).toMatchObject({ apiVersion: 'example.com/v1beta1', kind: 'Thing' });
    server.faults.sendBookmarks();
    server.store.create(pod('bump-things', 'w'));
    server.faults.sendBookmarks();
    expect(at((await w.next())?.object, 'apiVersion')).toBe('example.com/v1beta1');
    w.close();
  });
});
