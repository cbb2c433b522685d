/**
 * What every body the API accepts is bounded by before it is looked at: the nesting depth of its JSON
 * (and of the YAML manifests an operation carries), and for operations a body of 1 MiB. Each attack
 * here once made a 500 or was taken whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hono } from 'hono';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from '../test/support/api.ts';
import { tableSnapshot } from '../test/support/snapshot.ts';
import { TestTables } from '../test/support/table.ts';
import { ManualClock } from '../test/support/manual-clock.ts';
import { MAX_JSON_DEPTH } from '../shared/json-depth.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { putAgentStaticAccounts } from '../shared/table/sources/agent-static.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { createApp, DEFAULT_MAX_OPERATION_BODY_BYTES } from './app.ts';
import type { ApiEnv } from './auth/caller.ts';

const tables = new TestTables();
let table: TableRef;
let app: Hono<ApiEnv>;

beforeAll(async () => {
  await tables.start();
  table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, [{ name: 'prod' }], clock.now());
  await putAgentStaticAccounts(table, 'agent-1', 'agents_ns', [{ name: 'static' }], clock.now());
  app = createApp({ table, clock, auth: adminTokenAuth() });
});
afterAll(() => tables.close());

async function send(method: string, path: string, body: string, headers: Record<string, string> = {}) {
  const res = await app.request(path, { method, body, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'idempotency-key': 'k-1', ...headers } });
  return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as { detail?: string; errors?: { path: string; message: string }[] } };
}

const deployment = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'shop' }, ...extra });
/** `{"a":{"a":...}}` `depth` levels deep, as JSON text built without recursion. */
const nestedObjectText = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

const BODY_ROUTES: [string, string][] = [
  ['POST', '/vendor/accounts'],
  ['PATCH', '/vendor/accounts'],
  ['POST', '/vendor/accounts/static/operations'],
];

describe('JSON nesting depth', () => {
  it.each(BODY_ROUTES)('%s %s refuses a body nested 100,000 deep with 400, not a 500, and writes nothing', async (method, path) => {
    const before = await tableSnapshot(table);
    for (const text of [`${'['.repeat(100_000)}${']'.repeat(100_000)}`, nestedObjectText(100_000), `[${'{"x":['.repeat(50_000)}`]) {
      const res = await send(method, path, text);
      expect(res.status).toBe(400);
      expect(res.type).toBe('application/problem+json');
      expect(res.json.detail).toContain(`nested too deeply: at most ${MAX_JSON_DEPTH} levels`);
    }
    expect(await tableSnapshot(table)).toEqual(before);
  });

  it('counts brackets in strings as text, and takes a body at the limit', async () => {
    // The body, the manifest list and the manifest are three levels; its spec takes the rest.
    const manifest = deployment('deep', { spec: JSON.parse(nestedObjectText(MAX_JSON_DEPTH - 3)) as unknown, note: '[[[[{{{{'.repeat(100) });
    const atLimit = JSON.stringify({ action: 'deploy', manifests: [manifest] });
    const res = await send('POST', '/vendor/accounts/static/operations', atLimit, { 'idempotency-key': 'at-limit' });
    expect(res.status).toBe(202);
    const over = JSON.stringify({ action: 'deploy', manifests: [deployment('deeper', { spec: JSON.parse(nestedObjectText(MAX_JSON_DEPTH - 2)) as unknown })] });
    expect((await send('POST', '/vendor/accounts/static/operations', over, { 'idempotency-key': 'over' })).status).toBe(400);
  });

  it('refuses YAML manifests nested too deeply, before parsing them when the nesting is on one line', async () => {
    const before = await tableSnapshot(table);
    // Each of these once cost the parser seconds of CPU, or overflowed its stack.
    const oneLine = [`${'- '.repeat(500_000)}a`, `${'{a: '.repeat(200_000)}1${'}'.repeat(200_000)}`, '['.repeat(1_000_000 - 100), `data: ${'['.repeat(65)}${']'.repeat(65)}\n`];
    for (const [i, manifests] of oneLine.entries()) {
      const res = await send('POST', '/vendor/accounts/static/operations', JSON.stringify({ action: 'deploy', manifests }), { 'idempotency-key': `yaml-${i}` });
      expect(res.status, manifests.slice(0, 40)).toBe(400);
      expect(res.json.errors).toEqual([{ path: 'manifests', message: `YAML nested too deeply: at most ${MAX_JSON_DEPTH} levels` }]);
    }
    // Nested by indentation, a line per level: parsed, then measured.
    const indented = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  namespace: shop\ndata:\n${Array.from({ length: 70 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')} 1\n`;
    const res = await send('POST', '/vendor/accounts/static/operations', JSON.stringify({ action: 'deploy', manifests: indented }), { 'idempotency-key': 'yaml-indented' });
    expect(res.status).toBe(400);
    expect(res.json.errors).toContainEqual({ path: 'manifests[0]', message: `YAML document 1 is nested too deeply: at most ${MAX_JSON_DEPTH} levels` });
    expect(await tableSnapshot(table)).toEqual(before);
    // Brackets in quoted scalars, block scalars and comments are text, not nesting.
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: brackets\n  namespace: shop\n# ${'['.repeat(100)}\ndata:\n  a: "${'['.repeat(100)}"\n  b: |\n    ${'{'.repeat(100)}\n  c: [1, {d: [2]}]\n`;
    expect((await send('POST', '/vendor/accounts/static/operations', JSON.stringify({ action: 'deploy', manifests: text }), { 'idempotency-key': 'yaml-text' })).status).toBe(202);
  });
});

describe('operation body limit', () => {
  it('refuses an operation body over 1 MiB with 413 before reading it, as docs/operations.md says', async () => {
    expect(DEFAULT_MAX_OPERATION_BODY_BYTES).toBe(1024 * 1024);
    const before = await tableSnapshot(table);
    // Repeated text compresses to almost nothing, so only the body limit stops it.
    const body = JSON.stringify({ action: 'deploy', manifests: [deployment('big', { data: { blob: 'x'.repeat(DEFAULT_MAX_OPERATION_BODY_BYTES) } })] });
    const res = await send('POST', '/vendor/accounts/static/operations', body, { 'idempotency-key': 'big' });
    expect(res.status).toBe(413);
    expect(await tableSnapshot(table)).toEqual(before);
    // Just under the limit is taken.
    const fits = JSON.stringify({ action: 'deploy', manifests: [deployment('fits', { data: { blob: 'x'.repeat(DEFAULT_MAX_OPERATION_BODY_BYTES - 1024) } })] });
    expect((await send('POST', '/vendor/accounts/static/operations', fits, { 'idempotency-key': 'fits' })).status).toBe(202);
  });
});
