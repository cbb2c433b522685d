import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeConfigFor } from '../target.ts';
import {
  type Scenario, client, configMap, createConfigMap, createNamespace, expectHttp, expectStatusBody, field, names, newNamespace, resourceVersion, rvNumber, unique,
} from './kube.ts';

const base = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const token = (list: unknown) => encodeURIComponent(String(field(list, 'metadata.continue')));

export const listScenarios: Scenario[] = [
  {
    name: 'paged list: limit and continue walk a consistent snapshot in name order',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'paging');
      for (const name of ['e', 'a', 'd', 'b', 'c']) await createConfigMap(c, ns, name);
      const base = `/api/v1/namespaces/${ns}/configmaps`;

      const first = await c.expect(200, `${base}?limit=2`);
      expect(names(first)).toEqual(['a', 'b']);
      const token = field(first, 'metadata.continue');
      expect(typeof token).toBe('string');
      expect(field(first, 'metadata.remainingItemCount')).toBe(3);
      const snapshot = resourceVersion(first);

      // A write between pages is not seen by the pages that follow: they are served at the first page's version.
      await createConfigMap(c, ns, 'bb');
      const second = await c.expect(200, `${base}?limit=2&continue=${encodeURIComponent(String(token))}`);
      expect(names(second)).toEqual(['c', 'd']);
      expect(resourceVersion(second)).toBe(snapshot);
      expect(field(second, 'metadata.remainingItemCount')).toBe(1);
      const last = await c.expect(200, `${base}?limit=2&continue=${encodeURIComponent(String(field(second, 'metadata.continue')))}`);
      expect(names(last)).toEqual(['e']);
      expect(field(last, 'metadata.continue')).toBeUndefined();
      expect(field(last, 'metadata.remainingItemCount')).toBeUndefined();

      // A fresh list sees the write.
      expect(names(await c.expect(200, base))).toEqual(['a', 'b', 'bb', 'c', 'd', 'e']);
      // A token that is not one the server made is a 400.
      const bad = await c.expect(400, `${base}?limit=2&continue=not-a-token`);
      expectStatusBody(bad, { code: 400, reason: 'BadRequest', message: /^invalid continue token: / });
    },
  },
  {
    name: 'list resourceVersion: "0" is any state (unordered, unpaged), Exact is a past state, NotOlderThan at least that one',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'list-rv');
      const one = await createConfigMap(c, ns, 'one');
      await createConfigMap(c, ns, 'two');
      await createConfigMap(c, ns, 'three');
      const base = `/api/v1/namespaces/${ns}/configmaps`;

      // kube-apiserver serves "0" from its watch cache: in no promised order, and without paging.
      const any = await c.expect(200, `${base}?resourceVersion=0&limit=1`);
      expect(names(any).sort()).toEqual(['one', 'three', 'two']);
      expect(field(any, 'metadata.continue')).toBeUndefined();

      const atOne = await c.expect(200, `${base}?resourceVersion=${resourceVersion(one)}&resourceVersionMatch=Exact`);
      expect(names(atOne)).toEqual(['one']);
      expect(resourceVersion(atOne)).toBe(resourceVersion(one));
      const latest = await c.expect(200, base);
      const notOlder = await c.expect(200, `${base}?resourceVersion=${resourceVersion(one)}&resourceVersionMatch=NotOlderThan`);
      expect(names(notOlder).sort()).toEqual(['one', 'three', 'two']);
      expect(Number(resourceVersion(notOlder))).toBeGreaterThanOrEqual(Number(resourceVersion(one)));
      expect(Number(resourceVersion(latest))).toBeGreaterThanOrEqual(Number(resourceVersion(notOlder)));
      // resourceVersionMatch needs a resourceVersion.
      await c.expect(422, `${base}?resourceVersionMatch=Exact`);
    },
  },
  {
    name: 'list resourceVersion: a version newer than the server has is a 504 Timeout naming ResourceVersionTooLarge',
    timeoutMs: 30_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'list-future');
      const now = Number(resourceVersion(await c.expect(200, `${base(ns)}`)));
      // kube-apiserver waits about 3 s for its cache to catch up before it answers.
      const future = await c.expect(504, `${base(ns)}?resourceVersion=${now + 1000}&resourceVersionMatch=NotOlderThan`);
      expectStatusBody(future, {
        code: 504,
        reason: 'Timeout',
        message: /^Timeout: Too large resource version: \d+, current: \d+$/,
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      });
    },
  },
  {
    name: 'list resourceVersion: unset and "" are the latest state; a past version with a limit is that state, deleted objects included, and its pages stay there',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'list-past');
      for (const name of ['a', 'b', 'c']) await createConfigMap(c, ns, name);
      const past = resourceVersion(await c.expect(200, base(ns)));
      await c.expect(200, `${base(ns)}/b`, { method: 'DELETE' });
      await createConfigMap(c, ns, 'd');

      expect(names(await c.expect(200, base(ns)))).toEqual(['a', 'c', 'd']);
      expect(names(await c.expect(200, `${base(ns)}?resourceVersion=`))).toEqual(['a', 'c', 'd']);
      // A version with a limit and no resourceVersionMatch is an exact read (the rule before resourceVersionMatch).
      const first = await c.expect(200, `${base(ns)}?resourceVersion=${past}&limit=2`);
      expect(names(first)).toEqual(['a', 'b']);
      expect(resourceVersion(first)).toBe(past);
      const second = await c.expect(200, `${base(ns)}?limit=2&continue=${token(first)}`);
      expect(names(second)).toEqual(['c']);
      expect(resourceVersion(second)).toBe(past);
      expect(field(second, 'metadata.continue')).toBeUndefined();
    },
  },
  {
    name: 'list resourceVersion: an exact version the server has not reached and a malformed one are 500s without a reason',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'list-bad-rv');
      const now = rvNumber(await c.expect(200, base(ns)));
      // Exact reads go to etcd, which refuses revisions it has not made yet; nothing waits for them.
      for (const query of [`resourceVersion=${now + 1000}&resourceVersionMatch=Exact`, `resourceVersion=${now + 1000}&limit=5`]) {
        expect(await c.expect(500, `${base(ns)}?${query}`)).toEqual({
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: mvcc: required revision is a future revision', code: 500,
        });
      }
      expect(await c.expect(500, `${base(ns)}?resourceVersion=abc`)).toEqual({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax', code: 500,
      });
    },
  },
  {
    name: 'paged list across namespaces: pages walk namespace, then name; with a selector there is no remainingItemCount',
    async run(target) {
      const c = client(target);
      const tag = unique('tag');
      const [first, second] = [unique('pages-a'), unique('pages-b')];
      for (const ns of [second, first]) await createNamespace(c, ns);
      for (const [ns, name] of [[second, 'z'], [first, 'y'], [second, 'w'], [first, 'x']] as const) {
        await c.expect(201, base(ns), { method: 'POST', body: configMap(ns, name, {}, { tag }) });
      }
      const path = `/api/v1/configmaps?labelSelector=${encodeURIComponent(`tag=${tag}`)}&limit=3`;
      const key = (i: unknown) => `${String(field(i, 'metadata.namespace'))}/${String(field(i, 'metadata.name'))}`;
      const page = await c.expect(200, path);
      expect((page.items as unknown[]).map(key)).toEqual([`${first}/x`, `${first}/y`, `${second}/w`]);
      expect(field(page, 'metadata.remainingItemCount')).toBeUndefined();
      const rest = await c.expect(200, `${path}&continue=${token(page)}`);
      expect((rest.items as unknown[]).map(key)).toEqual([`${second}/z`]);
      expect(field(rest, 'metadata.continue')).toBeUndefined();
    },
  },
  {
    name: 'large lists come gzip-compressed to clients that ask for it; small ones, and lists for clients that do not ask, come plain',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'gzip');
      const filler = 'x'.repeat(4096);
      for (let i = 0; i < 40; i++) await createConfigMap(c, ns, `big-${String(i).padStart(2, '0')}`, { filler });
      const large = await c.call(base(ns), { acceptEncoding: 'gzip' });
      expect(large.status).toBe(200);
      expect(large.headers['content-encoding']).toBe('gzip');
      expect(names(large.body ?? {})).toHaveLength(40);
      const plain = await c.call(base(ns));
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(names(plain.body ?? {})).toHaveLength(40);
      const small = await c.call(`${base(ns)}?limit=1`, { acceptEncoding: 'gzip' });
      expect(small.headers['content-encoding']).toBeUndefined();
      expect(names(small.body ?? {})).toHaveLength(1);
    },
  },
  {
    name: 'list resourceVersion: on 1.20 each kind\'s watch cache has its own version: "0" reports it, and a newer version of another kind times out (504)',
    timeoutMs: 30_000,
    async run(target) {
      const { c, ns } = await newNamespace(target, 'cache-rv');
      const minor = Number.parseInt(String((await c.expect(200, '/version')).minor), 10);
      const secrets = `/api/v1/namespaces/${ns}/secrets`;
      const secret = await c.expect(201, secrets, { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'only', namespace: ns } } });
      const newer = rvNumber(await createConfigMap(c, ns, 'newer'));

      const any = await c.expect(200, `${secrets}?resourceVersion=0`);
      expect(names(any)).toEqual(['only']);
      expect(rvNumber(any)).toBeGreaterThanOrEqual(rvNumber(secret));
      // A read from etcd reports etcd's revision, whatever kind it lists.
      expect(rvNumber(await c.expect(200, secrets))).toBeGreaterThanOrEqual(newer);

      const notOlder = await c.call(`${secrets}?resourceVersion=${newer}&resourceVersionMatch=NotOlderThan`);
      if (minor > 20) {
        // Later servers' caches follow etcd's progress: the read is served.
        expectHttp(notOlder, 200, 'not older than a version of another kind');
        return;
      }
      expect(rvNumber(any)).toBeLessThan(newer);
      expectHttp(notOlder, 504, 'not older than a version of another kind');
      expectStatusBody(notOlder.body, {
        code: 504,
        reason: 'Timeout',
        message: `Timeout: Too large resource version: ${newer}, current: ${resourceVersion(any)}`,
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      });
    },
  },
  {
    name: 'paged list through @kubernetes/client-node',
    async run(target) {
      const { c, ns } = await newNamespace(target, 'client-pages');
      for (const name of ['p1', 'p2', 'p3']) await createConfigMap(c, ns, name);
      const core = kubeConfigFor(target, target.auth.admin).makeApiClient(CoreV1Api);
      const seen: string[] = [];
      let token: string | undefined;
      do {
        const page = await core.listNamespacedConfigMap({ namespace: ns, limit: 2, _continue: token });
        seen.push(...page.items.map((i) => i.metadata?.name ?? ''));
        token = page.metadata?._continue;
      } while (token);
      expect(seen).toEqual(['p1', 'p2', 'p3']);
    },
  },
];


