import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from './index.ts';
import { at, items, names, raw, str, watch } from './http-client.test-helper.ts';

let server: TestApiServer;
const NAMESPACES = 40;
const PER_NAMESPACE = 100;

beforeAll(async () => {
  server = await startTestApiServer({ bootstrap: false });
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `ns-${String(n).padStart(2, '0')}`;
    server.store.ensureNamespace(ns);
    for (let i = 0; i < PER_NAMESPACE; i++) {
      server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}`, namespace: ns, labels: { shard: String(i % 4) } }, data: { i: String(i) } });
    }
  }
});
afterAll(async () => {
  await server.close();
});

describe('at scale', () => {
  it('pages 4,000 objects across namespaces exactly once each while writes go on', async () => {
    const seen: string[] = [];
    let cont = '';
    let pages = 0;
    do {
      const res = await raw(server.url, `/api/v1/configmaps?limit=250${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
      for (const item of items(res.json)) seen.push(`${str(item, 'metadata.namespace')}/${str(item, 'metadata.name')}`);
      cont = (at(res.json, 'metadata.continue') as string | undefined) ?? '';
      pages++;
      server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `zz-during-${pages}`, namespace: 'ns-00' } });
    } while (cont !== '');
    expect(pages).toBe(16);
    expect(seen).toHaveLength(NAMESPACES * PER_NAMESPACE);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
  });

  it('delivers each write only to watches of its namespace or of all namespaces', async () => {
    const rv = server.store.resourceVersion;
    const mine = await watch(server.url, `/api/v1/namespaces/ns-07/configmaps?watch=1&resourceVersion=${rv}`);
    const other = await watch(server.url, `/api/v1/namespaces/ns-08/configmaps?watch=1&resourceVersion=${rv}`);
    const all = await watch(server.url, `/api/v1/configmaps?watch=1&resourceVersion=${rv}&labelSelector=shard%3D1`);
    for (let i = 0; i < 20; i++) {
      server.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns-07', name: `cm-${String(i).padStart(3, '0')}` }, { data: { touched: 'yes' } });
    }
    const got = await mine.until((e) => str(e.object, 'metadata.name') === 'cm-019');
    expect(got).toHaveLength(20);
    const selected = await all.until((e) => str(e.object, 'metadata.name') === 'cm-017');
    expect(selected.map((e) => str(e.object, 'metadata.name'))).toEqual(['cm-001', 'cm-005', 'cm-009', 'cm-013', 'cm-017']);
    expect(other.lines).toEqual([]);
    for (const w of [mine, other, all]) w.close();
  });

  it('lists one namespace by its own key range', async () => {
    const res = await raw(server.url, '/api/v1/namespaces/ns-39/configmaps?labelSelector=shard%3D3&limit=10');
    expect(names(res.json)).toEqual(['cm-003', 'cm-007', 'cm-011', 'cm-015', 'cm-019', 'cm-023', 'cm-027', 'cm-031', 'cm-035', 'cm-039']);
    expect(at(res.json, 'metadata.continue')).toBeDefined();
  });
});

describe('as a separate process', () => {
  it('prints its URL once seeded, writes a kubeconfig and serves the seeded objects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(process.execPath, ['test/kube/main.ts', '--seed', '300', '--namespaces', '3', '--kubeconfig', kubeconfig, '--token', 'bench-token'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      });
      const ready = JSON.parse(line) as { url: string; seeded: Record<string, number> };
      expect(ready.seeded).toMatchObject({ Pod: 120, Deployment: 24, ReplicaSet: 45 });
      expect(readFileSync(kubeconfig, 'utf8')).toContain(`server: ${ready.url}`);
      const pods = await raw(ready.url, '/api/v1/pods?limit=500', { headers: { authorization: 'Bearer bench-token' } });
      expect(items(pods.json)).toHaveLength(120);
      expect((await raw(ready.url, '/api/v1/pods')).status).toBe(401);
      const stats = await raw(ready.url, '/_test/stats');
      expect(stats.json).toMatchObject({ objects: { '/pods': 120 } });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
