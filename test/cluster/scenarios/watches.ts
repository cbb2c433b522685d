import { Watch } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { type WatchEvent, type WatchStream, openWatch } from '../http.ts';
import { kubeConfigFor } from '../target.ts';
import {
  type Scenario, newNamespace, client, configMap, createConfigMap, createNamespace, expectStatusBody, field, names, resourceVersion, rvNumber, unique,
} from './kube.ts';

/** The events left on a watch until the server ends it. */
async function rest(watch: WatchStream, timeoutMs = 10_000): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for (let e = await watch.next(timeoutMs); e !== 'end'; e = await watch.next(timeoutMs)) out.push(e);
  return out;
}

const summary = (e: WatchEvent) => `${e.type} ${String(field(e.object, 'metadata.name'))} ${String(field(e.object, 'metadata.resourceVersion'))}`;

export const watchScenarios: Scenario[] = [
  {
    name: 'watch: from a list\'s resourceVersion, then resumed from the last event seen without replaying it',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'watch');
      await createConfigMap(c, ns, 'before');
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      const list = await c.expect(200, base);

      const watch = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);
      const created = await createConfigMap(c, ns, 'w', { n: '1' });
      const added = await watch.next();
      expect(added).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'w', resourceVersion: resourceVersion(created) } } });
      const modifiedObj = await c.expect(200, `${base}/w`, { method: 'PUT', body: { ...configMap(ns, 'w', { n: '2' }), metadata: { name: 'w', namespace: ns } } });
      expect(await watch.next()).toMatchObject({ type: 'MODIFIED', object: { data: { n: '2' }, metadata: { resourceVersion: resourceVersion(modifiedObj) } } });
      watch.close();

      // While nobody watches: another update and a delete.
      await c.expect(200, `${base}/w`, { method: 'PUT', body: { ...configMap(ns, 'w', { n: '3' }), metadata: { name: 'w', namespace: ns } } });
      await c.expect(200, `${base}/w`, { method: 'DELETE' });

      const resumed = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${resourceVersion(modifiedObj)}`);
      const first = await resumed.next();
      const second = await resumed.next();
      resumed.close();
      expect([first, second].map((e) => (e === 'end' ? 'end' : e.type))).toEqual(['MODIFIED', 'DELETED']);
      if (first === 'end' || second === 'end') return;
      expect(first.object).toMatchObject({ data: { n: '3' } });
      // DELETED carries the last state of the object, at the version of the deletion.
      expect(second.object).toMatchObject({ metadata: { name: 'w' }, data: { n: '3' } });
      expect(rvNumber(second.object)).toBeGreaterThan(rvNumber(first.object));
    },
  },
  {
    name: 'watch: resourceVersion "0" starts with ADDED for every existing object, then live events',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'watch-zero');
      await createConfigMap(c, ns, 'x');
      await createConfigMap(c, ns, 'y');
      // Bookmarks allowed: a plain watch never gets the initial-events-end bookmark WatchList requests end their initial events with.
      const watch = openWatch(target, target.auth.admin, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=0&allowWatchBookmarks=true`);
      const initial = [await watch.next(), await watch.next()];
      expect(initial.map((e) => (e === 'end' ? 'end' : `${e.type} ${String(field(e.object, 'metadata.name'))}`)).sort()).toEqual(['ADDED x', 'ADDED y']);
      await createConfigMap(c, ns, 'z');
      expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'z' } } });
      watch.close();
    },
  },
  {
    name: 'watch: timeoutSeconds ends the stream cleanly',
    timeoutMs: 20_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'watch-timeout');
      const list = await c.expect(200, `/api/v1/namespaces/${ns}/configmaps`);
      const watch = openWatch(target, target.auth.admin, `/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=1&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);
      expect(await watch.next(10_000)).toBe('end');
    },
  },
  {
    name: 'bookmarks: a watch from a list\'s version gets a BOOKMARK after a newer event of its kind, before its timeout',
    timeoutMs: 30_000,
    async run(target) {
      const c = client(target);
      const [quiet, busy] = [unique('bookmark-quiet'), unique('bookmark-busy')];
      await createNamespace(c, quiet);
      await createNamespace(c, busy);
      const list = await c.expect(200, `/api/v1/namespaces/${quiet}/configmaps`);
      const watch = openWatch(target, target.auth.admin,
        `/api/v1/namespaces/${quiet}/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);
      // A change of the watched kind that this watch does not see, made after it started: kube-apiserver
      // sends a bookmark only when its kind has had an event newer than where the watch started.
      const elsewhere = await createConfigMap(c, busy, 'elsewhere');
      const { event, seen } = await watch.until((e) => e.type === 'BOOKMARK', 10_000);
      expect(seen.map(summary)).toEqual([summary(event)]);
      // A bookmark is an object of the watched kind with nothing but its resourceVersion.
      expect(event.object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
      expect(Object.keys(event.object.metadata as object)).toContain('resourceVersion');
      expect(event.object).not.toHaveProperty('data');
      expect(rvNumber(event.object)).toBeGreaterThanOrEqual(rvNumber(elsewhere));
      // The same bookmark may come again before the stream ends at its timeout; nothing else does.
      expect((await rest(watch)).map((e) => e.type).filter((type) => type !== 'BOOKMARK')).toEqual([]);
    },
  },
  {
    name: 'watch from a resourceVersion the server has not reached: 200 and no error; older events are not sent and the stream ends at its timeout',
    timeoutMs: 20_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'watch-ahead');
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      const ahead = rvNumber(await c.expect(200, base)) + 1000;
      const watch = openWatch(target, target.auth.admin, `${base}?watch=1&timeoutSeconds=2&resourceVersion=${ahead}`);
      expect(await watch.status).toBe(200);
      await createConfigMap(c, ns, 'below');
      expect(await rest(watch)).toEqual([]);
    },
  },
  {
    name: 'bookmarks: on 1.20 a watch of a quiet kind gets none, however the resourceVersion moves for other kinds',
    timeoutMs: 20_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'bookmark-none');
      const minor = Number.parseInt(String((await c.expect(200, '/version')).minor), 10);
      const list = await c.expect(200, `/api/v1/namespaces/${ns}/secrets`);
      const watch = openWatch(target, target.auth.admin,
        `/api/v1/namespaces/${ns}/secrets?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);
      await createConfigMap(c, ns, 'another-kind');
      const events = await rest(watch);
      // 1.20's watch cache of a kind moves only on that kind's events; later servers also learn etcd's
      // progress and may send a bookmark of a quiet kind, at a version not older than the watch's.
      if (minor <= 20) expect(events).toEqual([]);
      for (const e of events) {
        expect(e.type).toBe('BOOKMARK');
        expect(rvNumber(e.object)).toBeGreaterThanOrEqual(rvNumber(list));
      }
    },
  },
  {
    name: 'WatchList: served with an initial-events-end bookmark, or refused with 422 where unsupported (1.20), never a plain watch; sendInitialEvents alone is a plain watch on 1.20',
    timeoutMs: 20_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'watch-list');
      await createConfigMap(c, ns, 'existing');
      const path = `/api/v1/namespaces/${ns}/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10`;
      const watch = openWatch(target, target.auth.admin, path);
      const status = await watch.status;
      if (status === 422) {
        // Servers without WatchList refuse the resourceVersionMatch a WatchList request carries.
        const refusal = await watch.next();
        expect(refusal).not.toBe('end');
        expectStatusBody(refusal, {
          code: 422,
          reason: 'Invalid',
          message: 'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided]',
          details: {
            group: 'meta.k8s.io',
            kind: 'ListOptions',
            causes: [
              { reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden for watch', field: 'resourceVersionMatch' },
              { reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided', field: 'resourceVersionMatch' },
            ],
          },
        });
        // sendInitialEvents alone is not a WatchList request there: a plain watch, never an initial-events-end bookmark.
        const plain = openWatch(target, target.auth.admin, `/api/v1/namespaces/${ns}/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1`);
        expect(await plain.status).toBe(200);
        expect((await rest(plain)).map((e) => `${e.type} ${String(field(e.object, 'metadata.name'))}`)).toEqual(['ADDED existing']);
        return;
      }
      expect(status).toBe(200);
      const { event, seen } = await watch.until((e) => e.type === 'BOOKMARK');
      watch.close();
      expect(seen.slice(0, -1).map((e) => `${e.type} ${String(field(e.object, 'metadata.name'))}`)).toEqual(['ADDED existing']);
      expect(field(event.object, 'metadata.annotations')).toEqual({ 'k8s.io/initial-events-end': 'true' });
      // With WatchList, sendInitialEvents needs resourceVersionMatch=NotOlderThan.
      const alone = await client(target).call(`/api/v1/namespaces/${ns}/configmaps?watch=1&sendInitialEvents=true`);
      expect(alone.status).toBe(422);
      expectStatusBody(alone.body, { code: 422, reason: 'Invalid', message: /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/ });
    },
  },
  {
    name: 'watch through @kubernetes/client-node: events from a list\'s resourceVersion',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'client-watch');
      const list = await c.expect(200, `/api/v1/namespaces/${ns}/configmaps`);
      const events: string[] = [];
      let settle: (v?: unknown) => void = () => {};
      const twoEvents = new Promise((resolve) => {
        settle = resolve;
      });
      const watcher = new Watch(kubeConfigFor(target, target.auth.admin));
      const request = await watcher.watch(`/api/v1/namespaces/${ns}/configmaps`, { resourceVersion: resourceVersion(list), allowWatchBookmarks: true },
        (type: string, obj: { metadata?: { name?: string } }) => {
          events.push(`${type} ${obj.metadata?.name}`);
          if (events.length === 2) settle();
        },
        () => {});
      await createConfigMap(c, ns, 'first');
      await c.expect(200, `/api/v1/namespaces/${ns}/configmaps/first`, { method: 'DELETE' });
      await twoEvents;
      request.abort();
      expect(events).toEqual(['ADDED first', 'DELETED first']);
    },
  },
  {
    name: '410 and relist: after history expires, old versions answer Expired; a relist gives a version that watches again',
    timeoutMs: 180_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'expired');
      for (const name of ['a', 'b', 'c']) await createConfigMap(c, ns, name);
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      const firstPage = await c.expect(200, `${base}?limit=1`);
      const oldToken = String(field(firstPage, 'metadata.continue'));
      const oldRv = resourceVersion(await c.expect(200, base));

      await target.knobs.expireHistory();

      // A watch from an expired version: the stream opens (200) and carries one ERROR event, then ends.
      const watch = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${oldRv}`);
      expect(await watch.status).toBe(200);
      const error = await watch.next();
      expect(error).toMatchObject({ type: 'ERROR' });
      if (error === 'end') return;
      expectStatusBody(error.object, { code: 410, reason: 'Expired', message: /^too old resource version: \d+ \(\d+\)$/ });
      expect(Object.keys(error.object).sort()).toEqual(['apiVersion', 'code', 'kind', 'message', 'metadata', 'reason', 'status']);
      expect(await watch.next()).toBe('end');

      // A list at an expired exact version.
      const exact = await c.expect(410, `${base}?resourceVersion=${oldRv}&resourceVersionMatch=Exact`);
      expectStatusBody(exact, { code: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' });

      // A continue token made before the expiry. The answer carries a token that goes on from the same
      // place at the current version, for clients that accept an inconsistent list.
      const expiredPage = await c.expect(410, `${base}?limit=1&continue=${encodeURIComponent(oldToken)}`);
      expectStatusBody(expiredPage, {
        code: 410, reason: 'Expired', metadata: { continue: expect.any(String) },
        message: /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results\./,
      });
      const inconsistentToken = String(field(expiredPage, 'metadata.continue'));
      const remainder = await c.expect(200, `${base}?limit=5&continue=${encodeURIComponent(inconsistentToken)}`);
      expect(names(remainder)).toEqual(['b', 'c']);

      // The relist: current objects and a version a watch can start from.
      const relist = await c.expect(200, base);
      expect(names(relist)).toEqual(['a', 'b', 'c']);
      const resumed = openWatch(target, target.auth.admin, `${base}?watch=1&resourceVersion=${resourceVersion(relist)}`);
      await createConfigMap(c, ns, 'd');
      expect(await resumed.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'd' } } });
      resumed.close();
    },
  },
];
