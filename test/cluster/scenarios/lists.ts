import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeConfigFor } from '../target.ts';
import { type Scenario, createConfigMap, expectStatusBody, field, names, newNamespace, resourceVersion } from './kube.ts';

const base = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

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


