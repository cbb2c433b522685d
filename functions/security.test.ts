import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenAuth, apiFixture, TEST_ADMIN_TOKEN, type ApiFixture } from '../test/support/api.ts';
import { apiOperations, resolveRef } from '../test/support/api-operations.ts';
import { schemaValue } from '../test/support/hostile.ts';
import { snapshotDiff, tableSnapshot } from '../test/support/snapshot.ts';
import { TestTables } from '../test/support/table.ts';
import { createApp, DEFAULT_MAX_BODY_BYTES } from './app.ts';
import { openApiDocument } from './openapi/document.ts';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';
import { HSTS } from './security.ts';

const tables = new TestTables();
let f: ApiFixture;
beforeAll(async () => {
  await tables.start();
  f = await apiFixture(tables, [{ name: 'prod' }, { name: 'stage' }]);
});
afterAll(() => tables.close());

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** The headers every answer carries, whatever its status. */
function expectSecurityHeaders(res: Response, what: string): void {
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
  expect(res.headers.get('content-security-policy'), what).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(res.headers.get('cache-control'), what).toBe('no-store');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(res.headers.get('x-powered-by'), what).toBeNull();
}

describe('security headers', () => {
  it('are on every answer: success, refusals, errors, unknown routes, open routes', async () => {
    const requests: [string, RequestInit, number][] = [
      ['/vendor/accounts', { headers: admin }, 200],
      ['/vendor/accounts/prod', { headers: admin }, 200],
      ['/vendor/accounts?page=0', { headers: admin }, 400],
      ['/vendor/accounts', {}, 401],
      ['/vendor/accounts/nobody', { headers: admin }, 404],
      ['/nowhere', { headers: admin }, 404],
      ['/vendor/accounts', { method: 'POST', headers: admin, body: 'x'.repeat(DEFAULT_MAX_BODY_BYTES + 1) }, 413],
      ['/healthz', {}, 200],
      ['/openapi.json', {}, 200],
    ];
    for (const [path, init, status] of requests) {
      const res = await f.app.request(path, init);
      expect(res.status, path).toBe(status);
      expectSecurityHeaders(res, `${init.method ?? 'GET'} ${path}`);
    }
  });

  it('sends HSTS only when the request came over TLS (directly, or to the proxy in front)', async () => {
    expect((await f.app.request('/healthz')).headers.get('strict-transport-security')).toBeNull();
    expect((await f.app.request('https://api.example.com/healthz')).headers.get('strict-transport-security')).toBe(HSTS);
    expect((await f.app.request('/healthz', { headers: { 'x-forwarded-proto': 'https' } })).headers.get('strict-transport-security')).toBe(HSTS);
    expect((await f.app.request('/healthz', { headers: { 'x-forwarded-proto': 'HTTPS, http' } })).headers.get('strict-transport-security')).toBe(HSTS);
    expect((await f.app.request('/healthz', { headers: { 'x-forwarded-proto': 'http' } })).headers.get('strict-transport-security')).toBeNull();
  });
});

describe('body limits on every route that takes a body', () => {
  let document: Record<string, unknown>;
  let withBody: ReturnType<typeof apiOperations>;
  beforeAll(async () => {
    document = await openApiDocument(f.app);
    withBody = apiOperations(document).filter((op) => op.body !== undefined);
  });

  /** A request that passes everything before the body: an existing account in the path, valid header parameters. */
  function requestFor(op: (typeof withBody)[number], body: NonNullable<RequestInit['body']>, headers: Record<string, string> = {}): Request {
    const path = op.path.replace(/\{[^}]+\}/g, 'prod');
    const params = Object.fromEntries(
      op.parameters.filter((p) => p.in === 'header').map((p) => [p.name, String(fc.sample(schemaValue(document, resolveRef(document, p.schema)), { numRuns: 1, seed: 1 })[0])]),
    );
    return new Request(`http://localhost${path}`, { method: op.method, headers: { ...admin, 'content-type': 'application/json', ...params, ...headers }, body, duplex: 'half' } as RequestInit);
  }

  it('the document names body routes, and each of them documents 413', () => {
    expect(withBody.map((op) => op.operationId)).toEqual(expect.arrayContaining(['registerAccounts', 'activateAccounts']));
    for (const op of withBody) expect([...op.statuses], op.operationId).toContain(413);
  });

  it('answers 413 problem+json to a body over the limit, however it is sent, and writes nothing', async () => {
    const before = await tableSnapshot(f.table);
    const big = `[${JSON.stringify({ name: 'prod', kubeconfigFile: `/${'k'.repeat(4000)}` })}${',{"name":"x"}'.repeat(DEFAULT_MAX_BODY_BYTES / 12)}]`;
    expect(big.length).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES);
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(big);
          for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
          controller.close();
        },
      });
    for (const op of withBody) {
      for (const [how, req] of [
        ['text without length', requestFor(op, big)],
        ['chunked stream', requestFor(op, stream())],
        ['declared length', requestFor(op, big, { 'content-length': String(big.length) })],
      ] as const) {
        const res = await f.app.request(req);
        const what = `${op.operationId}, ${how}`;
        expect(res.status, what).toBe(413);
        expect(res.headers.get('content-type'), what).toBe(PROBLEM_CONTENT_TYPE);
        expect(await res.json(), what).toMatchObject({ code: 'payload_too_large', status: 413 });
      }
    }
    expect(snapshotDiff(before, await tableSnapshot(f.table))).toEqual([]);
  });

  it('takes a body just under the limit', async () => {
    const records = [{ name: 'prod', kubeconfigFile: '/etc/kube/prod.yaml' }];
    const body = JSON.stringify(records).padEnd(DEFAULT_MAX_BODY_BYTES - 1, ' ');
    const res = await f.app.request('/vendor/accounts', { method: 'POST', headers: admin, body });
    expect(res.status).toBe(200);
  });
});

describe('CORS', () => {
  const origin = 'https://console.example.com';

  it('is off unless origins are configured: no CORS headers, preflights refused like any request', async () => {
    const res = await f.app.request('/vendor/accounts', { headers: { ...admin, origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await f.app.request('/vendor/accounts', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(401);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('answers configured origins only, and preflights before authentication', async () => {
    const app = createApp({ table: f.table, clock: f.clock, auth: adminTokenAuth(), corsOrigins: [origin] });
    const preflight = await app.request('/vendor/accounts', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expectSecurityHeaders(preflight, 'preflight');

    const allowed = await app.request('/vendor/accounts', { headers: { ...admin, origin } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
    expect(allowed.headers.get('access-control-expose-headers')).toContain('Retry-After');

    const other = await app.request('/vendor/accounts', { headers: { ...admin, origin: 'https://evil.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const otherPreflight = await app.request('/vendor/accounts', { method: 'OPTIONS', headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' } });
    expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
    // Credentials are still required for the request itself.
    expect((await app.request('/vendor/accounts', { headers: { origin } })).status).toBe(401);
  });
});
