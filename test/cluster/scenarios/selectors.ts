import { expect } from 'vitest';
import { openWatch } from '../http.ts';
import { type Scenario, client, configMap, field, items, resourceVersion, unique } from './kube.ts';

/**
 * What the cache's `omitNamespaces` and `onlySpinnakerManaged` rely on (docs/cache.md#what-is-cached):
 * a list and watch over every namespace with `fieldSelector=metadata.namespace!=...` and a label
 * selector is filtered by the server, Namespaces by `metadata.name!=...`, and an object that loses the
 * label is DELETED on such a watch.
 */
export const selectorScenarios: Scenario[] = [
  {
    name: 'selectors: a cluster-wide list and watch leave out an omitted namespace and unlabelled objects; losing the label is DELETED',
    async run(target) {
      const c = client(target);
      const run = unique('run');
      const kept = unique('sel-kept');
      const omitted = unique('sel-omitted');
      for (const ns of [kept, omitted]) {
        await c.expect(201, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'sel-run': run } } } });
      }
      const marked = { 'vendor-agent.io/managed': 'true', 'sel-run': run };
      const create = (ns: string, name: string, labels: Record<string, string>) =>
        c.expect(201, `/api/v1/namespaces/${ns}/configmaps`, { method: 'POST', body: configMap(ns, name, { a: '1' }, labels) });
      await create(kept, 'marked', marked);
      await create(kept, 'plain', { 'sel-run': run });
      await create(omitted, 'marked', marked);

      const query = `labelSelector=${encodeURIComponent(`vendor-agent.io/managed=true,sel-run=${run}`)}&fieldSelector=${encodeURIComponent(`metadata.namespace!=${omitted}`)}`;
      const list = await c.expect(200, `/api/v1/configmaps?${query}`);
      expect(items(list).map((i) => `${String(field(i, 'metadata.namespace'))}/${String(field(i, 'metadata.name'))}`)).toEqual([`${kept}/marked`]);
      const namespaces = await c.expect(200, `/api/v1/namespaces?labelSelector=sel-run%3D${run}&fieldSelector=${encodeURIComponent(`metadata.name!=${omitted}`)}`);
      expect(items(namespaces).map((i) => field(i, 'metadata.name'))).toEqual([kept]);

      const watch = openWatch(target, target.auth.admin, `/api/v1/configmaps?watch=1&${query}&resourceVersion=${resourceVersion(list)}`);
      expect(await watch.status).toBe(200);
      await create(omitted, 'late', marked);
      await create(kept, 'unmarked-late', { 'sel-run': run });
      await create(kept, 'late', marked);
      expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { namespace: kept, name: 'late' } } });
      await c.expect(200, `/api/v1/namespaces/${kept}/configmaps/marked`, {
        method: 'PATCH',
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { 'vendor-agent.io/managed': null } } },
      });
      expect(await watch.next()).toMatchObject({ type: 'DELETED', object: { metadata: { namespace: kept, name: 'marked' } } });
      watch.close();
    },
  },
];
