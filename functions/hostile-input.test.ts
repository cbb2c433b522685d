/**
 * Hostile input against every route of the API, property-based. The routes, their parameters, body
 * schemas and documented statuses come from the OpenAPI document (which functions/openapi.test.ts
 * holds equal to the app's routes), so a route added later is covered without editing this file.
 *
 * Each run sends a batch of requests built from valid ones and then spoilt: bodies (types, sizes,
 * unicode, nesting, duplicate and prototype keys, broken JSON and UTF-8), paths (encoded slashes, dot
 * segments, long names, bad percent-encodings), query strings, headers (content types, credentials,
 * huge values) and methods. Every answer must be a status the document names for the route Hono's
 * router picked (401 or 404 when none), never a 5xx, an error must be problem+json, and a refused
 * write must leave the whole table as it was (compared by a full Scan before and after).
 *
 * The seed is printed at the start and in any failure. The table carries over from batch to batch
 * (accepted writes change what later requests meet), so a failure is replayed by running the same
 * sequence again: `HOSTILE_SEED=<seed> HOSTILE_RUNS=<runs> npx vitest run functions/hostile-input.test.ts`
 * (`HOSTILE_RUNS` also runs more batches than the default).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hono } from 'hono';
import { captureLogger } from '../test/capture-log.ts';
import { adminTokenAuth, TEST_ADMIN_TOKEN } from '../test/support/api.ts';
import { apiOperations, routedOperation, type ApiOperation, type ApiParameter } from '../test/support/api-operations.ts';
import { bodyText, hostileInteger, hostileSegment, hostileString, mutatedValue, schemaValue, type Hints, type RawBody } from '../test/support/hostile.ts';
import { TestIssuer, oidcConfig, unsecuredToken } from '../test/support/oidc.ts';
import { secretScanner, type SecretScanner } from '../test/support/secret-scanner.ts';
import { snapshotDiff, tableSnapshot, type TableSnapshot } from '../test/support/snapshot.ts';
import { TestTables } from '../test/support/table.ts';
import { ManualClock } from '../test/support/manual-clock.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { pruneChanges } from '../shared/table/accounts/feed.ts';
import { putSession } from '../shared/table/agents/sessions.ts';
import { putAgentStaticAccounts } from '../shared/table/sources/agent-static.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { createApp, DEFAULT_MAX_BODY_BYTES } from './app.ts';
import { createApiAuth } from './auth/authenticator.ts';
import type { ApiEnv } from './auth/caller.ts';
import { openApiDocument } from './openapi/document.ts';
import { HTTP_STATUS, PROBLEM_CONTENT_TYPE } from './problem.ts';

const RUNS = Number(process.env.HOSTILE_RUNS ?? 400);
const SEED = process.env.HOSTILE_SEED === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.HOSTILE_SEED);

const DRIVER_ACCOUNTS = ['prod', 'stage', 'dev', 'locked', 'spaced'];
const ACCOUNT_NAMES = [...DRIVER_ACCOUNTS, 'static-a', 'ghost'];
const START = 1_700_000_000_000;

/** A kubeconfig sent where a reference belongs: refused, and never to be echoed. */
const CANARY = `canary-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
const KUBECONFIG_CONTENTS = `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: ${CANARY}-user-token\n`;
/** A secret typed after `encrypted:` where a reference belongs (no engine): refused, and never repeated (docs/secrets.md). */
const MISTYPED_SECRET = `encrypted:${CANARY}-typed-secret`;

const tables = new TestTables();
const capture = captureLogger();
const clock = new ManualClock(START);
// The routes' own document: generating it reads no table.
const document = await openApiDocument(createApp({ table: { client: null as never, tableName: 'unused' }, auth: adminTokenAuth() }));
const operations = apiOperations(document);
let issuer: TestIssuer;
let table: TableRef;
let app: Hono<ApiEnv>;
let scanner: SecretScanner;
let tokens: { weight: number; value: string | undefined }[];

beforeAll(async () => {
  await tables.start();
  issuer = await TestIssuer.start();
  issuer.now = () => Math.floor(clock.now() / 1000);
  const kid = await issuer.addKey('ES256');
  const rsaKid = await issuer.addKey('RS256');
  table = await tables.fresh();
  await syncSource(
    table,
    { id: 'driver-config', kind: 'driver-config' },
    [
      { name: 'prod' },
      { name: 'stage', kubeconfigFile: 'encrypted:secrets-manager!r:us-east-1!s:kube!k:stage' },
      { name: 'dev' },
      { name: 'locked', permissions: [{ READ: ['ops'] }, { WRITE: ['release'] }] },
      { name: 'spaced', permissions: [{ READ: ['release team'] }] },
    ],
    START,
  );
  await putAgentStaticAccounts(table, 'agent-1', 'zone-a', [{ name: 'static-a' }], START);
  await putSession(table, { agentId: 'agent-1', zoneId: 'zone-a', replicaId: 'r1', connectedAt: START, leaseExpiresAt: START + 3_600_000, agentVersion: '1.0.0', staticAccounts: ['static-a'] });
  const auth = createApiAuth({ oidc: oidcConfig(issuer), adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: ['vendor-admins'] }, { production: false, clock, logger: capture.log });
  app = createApp({ table, clock, auth, logger: capture.log });

  // Valid for longer than any run (the clock moves a second per batch), and no longer than tokens may live.
  const jwt = (claims: Record<string, unknown>, options: Parameters<TestIssuer['token']>[1] = {}) => issuer.token({ sub: 'someone', ...claims }, { kid, ttl: 86_400, ...options });
  const manager = await jwt({ groups: ['vendor-admins'] });
  const tampered = `${manager.slice(0, manager.lastIndexOf('.') + 1)}${'A'.repeat(86)}`;
  tokens = [
    { weight: 20, value: `Bearer ${TEST_ADMIN_TOKEN}` },
    { weight: 6, value: `Bearer ${manager}` },
    { weight: 2, value: `Bearer ${await jwt({ groups: ['ops'] })}` },
    { weight: 2, value: `Bearer ${await jwt({ groups: ['release'] }, { kid: rsaKid })}` },
    { weight: 2, value: `Bearer ${await jwt({})}` },
    { weight: 1, value: `Bearer ${await jwt({ groups: ['vendor-admins'] }, { iat: START / 1000 - 7200, ttl: 300 })}` },
    { weight: 1, value: `Bearer ${await jwt({ groups: ['vendor-admins'] }, { aud: 'someone-else' })}` },
    { weight: 1, value: `Bearer ${unsecuredToken({ iss: issuer.url, aud: 'vendor-api', sub: 'x', groups: ['vendor-admins'], exp: START / 1000 + 600 })}` },
    { weight: 1, value: `Bearer ${tampered}` },
    { weight: 1, value: `bearer   ${TEST_ADMIN_TOKEN}` },
    { weight: 1, value: `Bearer ${TEST_ADMIN_TOKEN}x` },
    { weight: 1, value: `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString('base64')}` },
    { weight: 1, value: `Bearer ${'a'.repeat(70_000)}` },
    { weight: 1, value: 'Bearer' },
    { weight: 1, value: 'Bearer a.b.c' },
    { weight: 2, value: undefined },
  ];
  scanner = secretScanner({ 'admin token': TEST_ADMIN_TOKEN, 'kubeconfig contents': KUBECONFIG_CONTENTS, 'kubeconfig token': `${CANARY}-user-token`, 'secret typed as a reference': MISTYPED_SECRET, ...(await issuer.privateParts()) });
});

afterAll(async () => {
  await issuer.close();
  await tables.close();
});

// ---- the requests ----

const names = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...DRIVER_ACCOUNTS) }, { weight: 1, arbitrary: fc.constantFrom(...ACCOUNT_NAMES) });
const hints: Hints = {
  name: names,
  accountId: names,
  accountName: names,
  zoneId: fc.constantFrom('zone-a', 'zone-b'),
  kubeconfigFile: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('/etc/kube/prod.yaml', 'encrypted:secrets-manager!r:us-east-1!s:kube!k:prod') }, { weight: 1, arbitrary: fc.constantFrom(KUBECONFIG_CONTENTS, MISTYPED_SECRET) }),
  kubeConfigFile: fc.oneof({ weight: 5, arbitrary: fc.constant('/etc/kube/stage.yaml') }, { weight: 1, arbitrary: fc.constant(KUBECONFIG_CONTENTS) }),
};

interface HostileRequest {
  operationId: string;
  method: string;
  path: string;
  headers: [string, string][];
  body: RawBody | undefined;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/problem+json',
  'application/json, text/html',
  ';;;',
  `application/${'x'.repeat(5_000)}`,
];

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'patch', 'PROPFIND', 'FOO', 'M-SEARCH'];

/** `value` one time in five, else `otherwise`. */
function rarely<T, U>(value: fc.Arbitrary<T>, otherwise: U): fc.Arbitrary<T | U> {
  return fc.oneof({ weight: 4, arbitrary: fc.constant(otherwise) }, { weight: 1, arbitrary: value });
}

function paramValue(p: ApiParameter): fc.Arbitrary<string> {
  const s = p.schema;
  if (s.type === 'integer') return hostileInteger(typeof s.minimum === 'number' ? s.minimum : 0, typeof s.maximum === 'number' ? s.maximum : 1_000_000);
  const valid = schemaValue(document, s, hints, p.name).map(String);
  return fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: hostileString });
}

function pathOf(op: ApiOperation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'path');
  const segments = fc.tuple(...params.map((p) => hostileSegment((hints[p.name] as fc.Arbitrary<string> | undefined) ?? fc.string({ minLength: 1, maxLength: 20 }))));
  const filled = segments.map((values) => params.reduce((path, p, i) => path.replace(`{${p.name}}`, values[i] as string), op.path));
  return fc.tuple(filled, fc.nat({ max: 40 })).map(([path, spoil]) => {
    switch (spoil) {
      case 0:
        return `${path}/`;
      case 1:
        return `/${path}`;
      case 2:
        return path.toUpperCase();
      case 3:
        return `${path}/extra`;
      case 4:
        return path.replace('/', '/./');
      case 5:
        return `/vendor/../${path.slice(1)}`;
      case 6:
        return `${path};jsessionid=1`;
      case 7:
        return `${path}#fragment`;
      case 8:
        return path.replace(/\//g, '%2F');
      case 9:
        return path.replace(/a/g, '%61');
      default:
        return path;
    }
  });
}

function queryOf(op: ApiOperation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const values = (p: ApiParameter) =>
    fc.oneof({ weight: 8, arbitrary: paramValue(p).map((v) => [v]) }, { weight: 1, arbitrary: fc.array(paramValue(p), { minLength: 2, maxLength: 3 }) }).map((vs) => vs.map((v) => `${p.name}=${v}`));
  const pairs = fc.tuple(...params.map((p) => fc.option(values(p), { freq: 2 })));
  const extra = rarely(
    fc.oneof(
      fc.string({ maxLength: 8 }).map((k) => `${encodeURIComponent(k)}=1`),
      fc.constantFrom('&&', '=', '=1', 'page', 'limit=', '%00=%00', '__proto__=1', 'constructor=x', 'page[]=1', 'page.x=1', 'PAGE=1'),
    ),
    null,
  );
  return fc.tuple(pairs, extra).map(([ps, x]) => {
    const all = [...ps.flatMap((p) => p ?? []), ...(x === null ? [] : [x])];
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}

function headersOf(op: ApiOperation): fc.Arbitrary<[string, string][]> {
  const headerParams = op.parameters.filter((p) => p.in === 'header');
  const auth = fc.oneof(...tokens.map((t) => ({ weight: t.weight, arbitrary: fc.constant(t.value) })));
  const contentType = fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5, nil: undefined });
  const params = fc.tuple(...headerParams.map((p) => fc.option(paramValue(p), { freq: 6, nil: undefined }).map((v) => [p.name, v] as const)));
  const junk = rarely(
    fc.constantFrom<[string, string][]>(
      [['x-huge', 'h'.repeat(64 * 1024)]],
      [['accept', 'text/html']],
      [['x-forwarded-for', '127.0.0.1, ::1, ${jndi:x}']],
      [['x-http-method-override', 'DELETE']],
      [['content-length', '1']],
      [['content-encoding', 'gzip']],
      Array.from({ length: 200 }, (_, i): [string, string] => [`x-many-${i}`, String(i)]),
    ),
    [] as [string, string][],
  );
  return fc.tuple(auth, contentType, params, junk).map(([a, ct, ps, j]) => [
    ...(a === undefined ? [] : [['authorization', a] as [string, string]]),
    ...(ct === undefined ? [] : [['content-type', ct] as [string, string]]),
    ...ps.filter((p): p is readonly [string, string] => p[1] !== undefined).map(([k, v]): [string, string] => [k, v]),
    ...j,
  ]);
}

function bodyOf(op: ApiOperation): fc.Arbitrary<RawBody | undefined> {
  const oversize = DEFAULT_MAX_BODY_BYTES + 16;
  if (op.body === undefined) return rarely(bodyText(fc.jsonValue({ maxDepth: 2 }), oversize), undefined);
  return bodyText(mutatedValue(schemaValue(document, op.body, hints)), oversize);
}

/** Requests for one operation; built once (building the schemas' arbitraries costs more than drawing from them). */
function requestOf(op: ApiOperation): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method: fc.oneof({ weight: 10, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) }),
      path: pathOf(op),
      query: queryOf(op),
      headers: headersOf(op),
      body: bodyOf(op),
    })
    .map(({ method, path, query, headers, body }): HostileRequest => {
      const r = { operationId: op.operationId, method, path: `${path}${query}`, headers, body };
      // Counterexamples print short: a 70 KB token or a 1 MiB body would bury the seed.
      return Object.assign(r, { [fc.toStringMethod]: () => describeRequest(r) });
    });
}

// ---- the checks ----

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How long a caller that asked to `wait` stays before hanging up. */
const WAIT_HANG_UP_MS = 200;
/** Largest error answer allowed: 100 errors of a few hundred characters, and a list of names at most. */
const MAX_ERROR_ANSWER = 256 * 1024;
const stats = { requests: 0, unbuildable: 0, statuses: new Map<number, number>(), byOperation: new Map<string, Map<number, number>>(), scans: 0 };

/** The Request as a client would send it; undefined when no client could (fetch refuses it). */
function build(r: HostileRequest): Request | undefined {
  try {
    const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
    // A `wait` would hold the answer for up to its seconds (nothing here runs operations): the caller
    // hangs up soon instead, as a client with a short timeout does; the answer must still be sound.
    const hangsUp = /[?&]wait=/.test(r.path) ? { signal: AbortSignal.timeout(WAIT_HANG_UP_MS) } : {};
    return new Request(`http://localhost${r.path}`, { method: r.method, headers: r.headers, ...hangsUp, ...(hasBody ? { body: r.body } : {}) });
  } catch {
    return undefined;
  }
}

function describeRequest(r: HostileRequest): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body.slice(0, 200) : `<${r.body.length} bytes>`;
  return `${r.method} ${r.path.slice(0, 200)} [${r.operationId}] headers=${JSON.stringify(r.headers.map(([k, v]) => [k, v.slice(0, 60)]).slice(0, 5))} body=${body}`;
}

async function check(r: HostileRequest, req: Request, res: Response): Promise<void> {
  const what = describeRequest(r);
  const text = await res.text();
  stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
  const mine = stats.byOperation.get(r.operationId) ?? new Map<number, number>();
  mine.set(res.status, (mine.get(res.status) ?? 0) + 1);
  stats.byOperation.set(r.operationId, mine);
  scanner.assertClean(text, `the answer to ${r.method} ${r.path.slice(0, 80)}`);
  scanner.assertClean(JSON.stringify([...res.headers]), `the headers of the answer to ${r.method} ${r.path.slice(0, 80)}`);
  expect(res.status, what).toBeLessThan(500);

  const op = routedOperation(app as unknown as Pick<Hono, 'getPath' | 'router'>, operations, req);
  const documented = op === undefined ? new Set([401, 404]) : op.statuses;
  expect([...documented], `${what}: status ${res.status} is not documented for ${op?.operationId ?? 'an unknown route'}`).toContain(res.status);

  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
  expect(res.headers.get('cache-control'), what).toBe('no-store');

  // Each fault of the request has its own answers; a request with several may get the answer of any of them.
  const faults: [string, number[]][] = [];
  if (op !== undefined && badQueryKeys(op, req)) faults.push(['unknown or repeated query parameter', [400, 401, 403]]);
  if (op !== undefined && badQueryValues(op, req)) faults.push(['query parameter outside its schema', [400, 401, 403]]);
  if (op?.body !== undefined && oversize(r)) faults.push(['body over the limit', [413, 401, 403, 404]]);
  if (faults.length > 0) expect(faults.flatMap(([, statuses]) => statuses), `${what}: ${faults.map(([name]) => name).join(' and ')}`).toContain(res.status);

  if (r.method === 'HEAD') return expect(text).toBe('');
  if (res.status < 400) return expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
  expect(res.headers.get('content-type'), what).toBe(PROBLEM_CONTENT_TYPE);
  // An error answer is small whatever was sent: no amplification of a large bad body.
  expect(text.length, what).toBeLessThanOrEqual(MAX_ERROR_ANSWER);
  const problem = JSON.parse(text) as Record<string, unknown>;
  expect(problem, what).toMatchObject({ type: expect.stringMatching(/^urn:vendor-agent:problem:/), title: expect.any(String), status: res.status, detail: expect.any(String), code: expect.any(String), errors: expect.any(Array) });
  expect(HTTP_STATUS[problem.code as keyof typeof HTTP_STATUS], what).toBe(res.status);
  if (res.status === 401) expect(res.headers.get('www-authenticate'), what).toMatch(/^Bearer realm="vendor-agent"/);
}

/** The route declares query parameters, and the request names another one or one of them twice (a 400, docs/api.md). */
function badQueryKeys(op: ApiOperation, req: Request): boolean {
  const declared = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
  if (declared.size === 0) return false;
  const keys = [...new URL(req.url).searchParams.keys()];
  return keys.some((k) => !declared.has(k)) || keys.length !== new Set(keys).size;
}

/** A declared integer query parameter whose value is not an integer within the document's bounds. */
function badQueryValues(op: ApiOperation, req: Request): boolean {
  const params = new URL(req.url).searchParams;
  return op.parameters.some((p) => {
    if (p.in !== 'query' || p.schema.type !== 'integer') return false;
    return params.getAll(p.name).some((value) => {
      const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
      const { minimum, maximum } = p.schema as { minimum?: number; maximum?: number };
      return Number.isNaN(n) || (minimum !== undefined && n < minimum) || (maximum !== undefined && n > maximum);
    });
  });
}

/** The body is over the limit, and no header claims otherwise (a real server frames the body by Content-Length). */
function oversize(r: HostileRequest): boolean {
  const bytes = typeof r.body === 'string' ? Buffer.byteLength(r.body) : (r.body?.length ?? 0);
  return bytes > DEFAULT_MAX_BODY_BYTES && !r.headers.some(([k]) => k === 'content-length') && r.method !== 'GET' && r.method !== 'HEAD';
}

async function snapshot(): Promise<TableSnapshot> {
  stats.scans++;
  return tableSnapshot(table);
}

/** Sends the batch in order: every refused write must leave the table exactly as it was. */
async function sendBatch(batch: readonly HostileRequest[]): Promise<void> {
  let before = await snapshot();
  for (const r of batch) {
    const req = build(r);
    if (req === undefined) {
      stats.unbuildable++;
      continue;
    }
    stats.requests++;
    const res = await app.request(req);
    await check(r, req, res);
    if (READS.has(r.method)) continue;
    const after = await snapshot();
    if (res.status >= 400) expect(snapshotDiff(before, after), `refused (${res.status}) but written: ${describeRequest(r)}`).toEqual([]);
    before = after;
  }
  // Reads write nothing either.
  expect(snapshotDiff(before, await snapshot()), 'written by a read').toEqual([]);
}

describe('hostile input against every route', () => {
  it('covers every operation of the OpenAPI document', () => {
    expect(operations.map((o) => o.operationId)).toEqual(expect.arrayContaining(['listAccounts', 'getAccount', 'registerAccounts', 'activateAccounts', 'removeAccount', 'health', 'openApi']));
  });

  it('answers only documented statuses, never 5xx, problem+json for errors, and writes nothing it refused', async () => {
    console.info(`hostile input seed: ${SEED}, ${RUNS} batches (replay: HOSTILE_SEED=${SEED} HOSTILE_RUNS=${RUNS})`);
    const prototypes = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
    const members = prototypes.map((p) => Object.getOwnPropertyNames(p).sort());
    const started = performance.now();
    await fc.assert(
      // Every operation equally often, whatever its parameters: after the tokens exist (beforeAll).
      fc.asyncProperty(fc.array(fc.oneof(...operations.map(requestOf)), { minLength: 1, maxLength: 12 }), async (batch) => {
        // The work feed of earlier batches is done with (a driver would have read it): dropping it keeps
        // the table, and so each Scan, small.
        await pruneChanges(table, clock.now() + 1);
        await clock.advance(1_000);
        await sendBatch(batch);
      }),
      // No shrinking: the table has moved on by then, so a smaller batch would not meet the same state.
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.info(`hostile input: ${stats.requests} requests (${stats.unbuildable} not sendable) in ${seconds} s, ${stats.scans} table scans; statuses ${JSON.stringify(Object.fromEntries(stats.statuses))}`);
    for (const [id, counts] of stats.byOperation) console.info(`  ${id}: ${JSON.stringify(Object.fromEntries(counts))}`);
    // Nothing sent may have reached into the built-in prototypes.
    expect(prototypes.map((p) => Object.getOwnPropertyNames(p).sort())).toEqual(members);
    // The run must have reached the routes, not only the front door.
    for (const status of [200, 400, 401, 404]) expect(stats.statuses.get(status) ?? 0, `answers with ${status}`).toBeGreaterThan(0);
  }, Math.max(120_000, RUNS * 300));

  it('logs no secret', () => {
    expect(capture.lines.length).toBeGreaterThan(0);
    scanner.assertClean(capture.text(), 'the API log');
  });
});
