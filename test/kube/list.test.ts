import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, items, names, pod, raw, str } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer({ tooLargeResourceVersionWaitMs: 50, bootstrap: false });
  for (const ns of ['a', 'b', 'c']) server.store.ensureNamespace(ns);
  for (let i = 0; i < 25; i++) {
    server.store.create(pod(`p${String(i).padStart(2, '0')}`, ['a', 'b', 'c'][i % 3], { parity: i % 2 === 0 ? 'even' : 'odd', idx: String(i) }));
  }
});
afterAll(async () => {
  await server.close();
});

async function pageAll(path: string, startAt = ''): Promise<{ names: string[]; pages: unknown[] }> {
  const pages: unknown[] = [];
  const all: string[] = [];
  let cont = startAt;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await raw(server.url, `${path}${cont === '' ? '' : `${sep}continue=${encodeURIComponent(cont)}`}`);
    expect(res.status, res.text).toBe(200);
    pages.push(res.json);
    all.push(...names(res.json));
    cont = (at(res.json, 'metadata.continue') as string | undefined) ?? '';
    if (cont === '') return { names: all, pages };
  }
}

describe('list', () => {
  it('lists all namespaces or one, in name order, with the list kind and the current resourceVersion', async () => {
    const all = await raw(server.url, '/api/v1/pods');
    expect(all.json).toMatchObject({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(server.store.resourceVersion) } });
    expect(items(all.json)).toHaveLength(25);
    const inB = await raw(server.url, '/api/v1/namespaces/b/pods');
    expect(names(inB.json)).toEqual(['p01', 'p04', 'p07', 'p10', 'p13', 'p16', 'p19', 'p22']);
  });

  it('pages with limit and continue, pinned to the first page resourceVersion, with remainingItemCount', async () => {
    const { names: got, pages } = await pageAll('/api/v1/pods?limit=10');
    expect(got).toHaveLength(25);
    expect(new Set(got).size).toBe(25);
    expect(pages.map((p) => items(p).length)).toEqual([10, 10, 5]);
    expect(pages.map((p) => at(p, 'metadata.remainingItemCount'))).toEqual([15, 5, undefined]);
    const rvs = new Set(pages.map((p) => str(p, 'metadata.resourceVersion')));
    expect(rvs.size).toBe(1);
  });

  it('serves later pages from the snapshot even when objects change between pages', async () => {
    const first = await raw(server.url, '/api/v1/namespaces/a/pods?limit=3');
    const cont = str(first.json, 'metadata.continue');
    server.store.create(pod('zz-late', 'a'));
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p24' });
    const rest = await pageAll('/api/v1/namespaces/a/pods?limit=3', cont);
    expect([...names(first.json), ...rest.names]).toEqual(['p00', 'p03', 'p06', 'p09', 'p12', 'p15', 'p18', 'p21', 'p24']);
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'zz-late' });
    server.store.create(pod('p24', 'a', { parity: 'even', idx: '24' }));
  });

  it('filters by equality and set label selectors and by metadata field selectors', async () => {
    expect(names((await raw(server.url, '/api/v1/namespaces/a/pods?labelSelector=parity%3Deven')).json)).toEqual(['p00', 'p06', 'p12', 'p18', 'p24']);
    expect(names((await raw(server.url, '/api/v1/pods?labelSelector=idx%20in%20(1,2,3),parity!%3Dodd')).json)).toEqual(['p02']);
    expect(names((await raw(server.url, '/api/v1/pods?fieldSelector=metadata.name%3Dp05')).json)).toEqual(['p05']);
    expect(names((await raw(server.url, '/api/v1/pods?fieldSelector=metadata.namespace%3Dc,metadata.name!%3Dp02&limit=100')).json)).toHaveLength(7);
    expect(names((await raw(server.url, '/api/v1/pods?labelSelector=!idx')).json)).toEqual([]);
    const paged = await pageAll('/api/v1/pods?labelSelector=parity%3Dodd&limit=5');
    expect(paged.names).toHaveLength(12);
    expect(paged.pages.every((p) => at(p, 'metadata.remainingItemCount') === undefined)).toBe(true);
  });

  it('refuses unsupported field selectors and malformed label selectors with 400', async () => {
    const field = await raw(server.url, '/api/v1/namespaces/a/configmaps?fieldSelector=spec.nodeName%3Dx');
    expect(field.status).toBe(400);
    expect(field.json).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: spec.nodeName' });
    expect((await raw(server.url, '/api/v1/pods?fieldSelector=spec.nodeName%3Dx')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/pods?labelSelector=a%20in%20b')).status).toBe(400);
  });

  it('reads an exact older resourceVersion, and answers 410 Expired once it is compacted', async () => {
    const before = server.store.resourceVersion;
    server.store.create(pod('newer', 'b'));
    const exact = await raw(server.url, `/api/v1/namespaces/b/pods?resourceVersion=${before}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(names(exact.json)).not.toContain('newer');
    expect(str(exact.json, 'metadata.resourceVersion')).toBe(String(before));
    const legacyExact = await raw(server.url, `/api/v1/namespaces/b/pods?resourceVersion=${before}&limit=100`);
    expect(names(legacyExact.json)).not.toContain('newer');
    const notOlder = await raw(server.url, `/api/v1/namespaces/b/pods?resourceVersion=${before}&resourceVersionMatch=NotOlderThan`);
    expect(names(notOlder.json)).toContain('newer');

    server.faults.compact();
    const gone = await raw(server.url, `/api/v1/namespaces/b/pods?resourceVersion=${before}&resourceVersionMatch=Exact`);
    expect(gone.status).toBe(410);
    expect(gone.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'The resourceVersion for the provided list is too old.', reason: 'Expired', code: 410 });
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'b', name: 'newer' });
  });

  it('answers 410 with a fresh continue token when a continue token outlives the retained history', async () => {
    const first = await raw(server.url, '/api/v1/pods?limit=5');
    server.store.create(pod('bump', 'c'));
    server.faults.compact();
    const res = await raw(server.url, `/api/v1/pods?limit=5&continue=${encodeURIComponent(str(first.json, 'metadata.continue'))}`);
    expect(res.status).toBe(410);
    expect(res.json).toMatchObject({ reason: 'Expired', code: 410 });
    expect(str(res.json, 'message')).toMatch(/^The provided continue parameter is too old/);
    const fresh = str(res.json, 'metadata.continue');
    const resumed = await raw(server.url, `/api/v1/pods?limit=100&continue=${encodeURIComponent(fresh)}`);
    expect(resumed.status).toBe(200);
    expect(names(resumed.json)).not.toContain(names(first.json)[0]);
    expect(str(resumed.json, 'metadata.resourceVersion')).toBe(String(server.store.resourceVersion));
    server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'c', name: 'bump' });
  });

  it('serves resourceVersion=0 from "cache": any version, limit ignored', async () => {
    const res = await raw(server.url, '/api/v1/pods?resourceVersion=0&limit=2');
    expect(items(res.json).length).toBe(25);
    expect(at(res.json, 'metadata.continue')).toBeUndefined();
  });

  it('answers 504 for a resourceVersion the server has not reached', async () => {
    const rv = server.store.resourceVersion + 100;
    const res = await raw(server.url, `/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(504);
    expect(res.json).toMatchObject({ reason: 'Timeout', message: `Timeout: Too large resource version: ${rv}, current: ${server.store.resourceVersion}`, details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } });
  });

  it('answers an exact read of a future revision, and a malformed resourceVersion, with the bare 500 etcd errors give', async () => {
    const rv = server.store.resourceVersion + 100;
    for (const query of [`resourceVersion=${rv}&resourceVersionMatch=Exact`, `resourceVersion=${rv}&limit=5`]) {
      const res = await raw(server.url, `/api/v1/pods?${query}`);
      expect(res.status).toBe(500);
      expect(res.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: mvcc: required revision is a future revision', code: 500 });
    }
    const bad = await raw(server.url, '/api/v1/pods?resourceVersion=-1');
    expect(bad.status).toBe(500);
    expect(bad.json).toMatchObject({ message: 'resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax' });
  });

  it('validates list options like kube-apiserver (422 on ListOptions, 400 on bad tokens)', async () => {
    const noRv = await raw(server.url, '/api/v1/pods?resourceVersionMatch=Exact');
    expect(noRv.status).toBe(422);
    expect(noRv.json).toMatchObject({ reason: 'Invalid', details: { group: 'meta.k8s.io', kind: 'ListOptions', causes: [{ field: 'resourceVersionMatch', reason: 'FieldValueForbidden' }] } });
    expect((await raw(server.url, '/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact')).status).toBe(422);
    expect((await raw(server.url, '/api/v1/pods?resourceVersion=1&resourceVersionMatch=Sometimes')).status).toBe(422);
    expect((await raw(server.url, '/api/v1/pods?sendInitialEvents=true')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/pods?continue=not-a-token')).status).toBe(400);
    const first = await raw(server.url, '/api/v1/namespaces/a/pods?limit=2');
    const cont = encodeURIComponent(str(first.json, 'metadata.continue'));
    expect((await raw(server.url, `/api/v1/namespaces/b/pods?limit=2&continue=${cont}`)).status).toBe(400);
    const withRv = await raw(server.url, `/api/v1/namespaces/a/pods?limit=2&continue=${cont}&resourceVersion=5`);
    expect(withRv.status).toBe(400);
    expect(withRv.json).toMatchObject({ message: 'specifying resource version is not allowed when using continue' });
  });
});
