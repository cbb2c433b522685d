/**
 * The API against a table that fails: stops answering, answers slowly, throttles, fails with 5xx,
 * drops connections, or applies a write and loses the answer (test/support/store-faults.ts, the SDK's
 * real retries and timeouts in between). Every answer is a 503 problem with `Retry-After`, never a
 * 500; each table call is tried at most `STORE_MAX_ATTEMPTS` times; a write the API acknowledged is
 * in the table afterwards; and once the table answers again, the same app serves as before.
 *
 * Timeouts are shortened here (the product's are seconds) so that a silent table costs the suite
 * little; the retry count is the product's.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Hono } from 'hono';
import { captureLogger } from '../test/capture-log.ts';
import { adminTokenAuth, TEST_ADMIN_TOKEN } from '../test/support/api.ts';
import { apiOperations } from '../test/support/api-operations.ts';
import { secretScanner } from '../test/support/secret-scanner.ts';
import { faultyTable, type StoreFault, type StoreFaults } from '../test/support/store-faults.ts';
import { TestTables } from '../test/support/table.ts';
import { ManualClock } from '../test/support/manual-clock.ts';
import { getAccount } from '../shared/table/accounts/records.ts';
import { STORE_MAX_ATTEMPTS, type TableRef } from '../shared/table/core/client.ts';
import { putSession } from '../shared/table/agents/sessions.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { everyFeedItem } from '../test/support/sharded-items.ts';
import { createApp } from './app.ts';
import type { ApiEnv } from './auth/caller.ts';
import { openApiDocument } from './openapi/document.ts';
import { PROBLEM_CONTENT_TYPE, RETRY_AFTER_THROTTLED_SECONDS, RETRY_AFTER_UNAVAILABLE_SECONDS } from './problem.ts';

// Long enough that a loaded machine does not time out a healthy call three times in a row.
const TEST_TIMEOUTS = { requestTimeoutMs: 500, connectionTimeoutMs: 500 };
const START = 1_700_000_000_000;
const ACCOUNTS = ['acct-0', 'acct-1', 'acct-2', 'acct-3', 'prod'];

const tables = new TestTables();
const capture = captureLogger();
const scanner = secretScanner({ 'admin token': TEST_ADMIN_TOKEN });
beforeAll(() => tables.start());
afterAll(() => tables.close());

interface Harness {
  healthy: TableRef;
  faults: StoreFaults;
  app: Hono<ApiEnv>;
  clock: ManualClock;
  close(): Promise<void>;
}

/** A fresh table with driver accounts and a live agent, the app on a faulty client of it. */
async function harness(): Promise<Harness> {
  const clock = new ManualClock(START);
  const healthy = await tables.fresh();
  await syncSource(healthy, { id: 'driver-config', kind: 'driver-config' }, ACCOUNTS.map((name) => ({ name })), START);
  await putSession(healthy, { agentId: 'agent-1', zoneId: 'zone-a', replicaId: 'r1', connectedAt: START, leaseExpiresAt: START + 86_400_000, agentVersion: '1.0.0', staticAccounts: [] });
  const { table, faults } = await faultyTable(healthy, TEST_TIMEOUTS);
  const app = createApp({ table, clock, auth: adminTokenAuth(), logger: capture.log });
  return { healthy, faults, app, clock, close: () => faults.close() };
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function call(app: Hono<ApiEnv>, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await app.request(path, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  scanner.assertClean(text, `the answer to ${method} ${path}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A valid request for each operation of the document that reads or writes the table. */
const TABLE_REQUESTS: Record<string, [string, string, unknown?]> = {
  listAccounts: ['GET', '/vendor/accounts'],
  getAccount: ['GET', '/vendor/accounts/prod'],
  registerAccounts: ['POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: '/etc/kube/prod.yaml' }]],
  activateAccounts: ['PATCH', '/vendor/accounts', [{ name: 'acct-3', state: 'ACTIVE' }]],
  removeAccount: ['DELETE', '/vendor/accounts/acct-2'],
  health: ['GET', '/healthz'],
};

function expectUnavailable(res: Answer, what: string, retryAfter = RETRY_AFTER_UNAVAILABLE_SECONDS): void {
  expect(res.status, `${what}: ${res.text.slice(0, 200)}`).toBe(503);
  expect(res.headers.get('content-type'), what).toBe(PROBLEM_CONTENT_TYPE);
  expect(res.headers.get('retry-after'), what).toBe(String(retryAfter));
  expect(res.json, what).toMatchObject({ code: 'unavailable', status: 503, type: 'urn:vendor-agent:problem:unavailable' });
}

describe('a table that fails', () => {
  let h: Harness;
  // A fresh client for each test: a long outage spends the SDK's retry quota, and the checks that the
  // table works again should keep the SDK's retries against a slow moment of a loaded machine.
  beforeEach(async () => {
    h = await harness();
    // Registered, so that PATCH reaches its writes.
    expect((await call(h.app, 'POST', '/vendor/accounts', [{ name: 'acct-3' }])).status).toBe(200);
  });
  afterEach(() => h.close());

  it('every route of the document that needs the table is listed here', async () => {
    const documented = apiOperations(await openApiDocument(h.app)).map((op) => op.operationId);
    expect(documented).toEqual(expect.arrayContaining(Object.keys(TABLE_REQUESTS)));
  });

  // A silent table costs every try its whole timeout: two routes (a read and a write) stand for all,
  // since every route reaches the table through the same client and error mapping.
  it.each<[string, StoreFault, string[]]>([
    ['stops answering', { kind: 'hang' }, ['getAccount', 'registerAccounts']],
    ['answers slower than the timeout', { kind: 'slow', ms: 1_500 }, ['listAccounts', 'removeAccount']],
    ['fails with 500', { kind: 'error', name: 'InternalServerError' }, Object.keys(TABLE_REQUESTS)],
    ['is behind a gateway answering 502 with a page', { kind: 'error', name: 'BadGateway', status: 502, body: '<html><body>502 Bad Gateway</body></html>' }, Object.keys(TABLE_REQUESTS)],
    ['drops connections', { kind: 'reset' }, Object.keys(TABLE_REQUESTS)],
    ['refuses connections', { kind: 'refuse' }, Object.keys(TABLE_REQUESTS)],
  ])('%s: table routes answer 503 with Retry-After after a bounded number of tries, and work again once it is back', async (_name, fault, ids) => {
    for (const id of ids) {
      const [method, path, body] = TABLE_REQUESTS[id] as [string, string, unknown?];
      h.faults.set(fault);
      const tries = h.faults.attempts.length;
      const res = await call(h.app, method, path, body);
      expectUnavailable(res, `${id} while the table ${_name}`);
      // The first table call failed after the SDK's tries; nothing more was attempted.
      const made = h.faults.attempts.slice(tries);
      expect(made.length, id).toBe(STORE_MAX_ATTEMPTS);
      expect(new Set(made.map((a) => a.operation)).size, id).toBe(1);
      h.faults.clear();
    }
    // Back: the same app answers as before, without a restart.
    expect((await call(h.app, 'GET', '/healthz')).status).toBe(200);
    expect((await call(h.app, 'GET', '/vendor/accounts')).json).toMatchObject({ total: ACCOUNTS.length });
    expect((await call(h.app, 'GET', '/vendor/accounts/prod')).status).toBe(200);
  });

  it('answers 200 from a table that is slow but within the timeout', async () => {
    h.faults.set({ kind: 'slow', ms: 20 });
    expect((await call(h.app, 'GET', '/vendor/accounts')).status).toBe(200);
    expect((await call(h.app, 'POST', '/vendor/accounts', [{ name: 'acct-1', zoneId: 'zone-a' }])).status).toBe(200);
    h.faults.clear();
    expect((await getAccount(h.healthy, 'acct-1'))?.registration?.zoneId).toBe('zone-a');
  });

  it('logs each failure for operators, never a secret', () => {
    expect(capture.lines.some((l) => l.msg === 'request failed')).toBe(true);
    scanner.assertClean(capture.text(), 'the API log');
  });
});

describe('retries', () => {
  it('tries each table call STORE_MAX_ATTEMPTS times before answering 503', async () => {
    const h = await harness();
    try {
      h.faults.set({ kind: 'hang' });
      expectUnavailable(await call(h.app, 'GET', '/vendor/accounts/prod'), 'a silent table');
      expect(h.faults.attempts).toEqual(Array.from({ length: STORE_MAX_ATTEMPTS }, () => ({ operation: 'GetItem', fault: 'hang' })));
    } finally {
      await h.close();
    }
  });

  it.each(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])(
    'throttled with %s: 503 with a short Retry-After once the SDK has given up, 200 when it passes',
    async (name) => {
      // A fresh client each: a long outage spends the SDK's retry quota, and this is about its retries.
      const h = await harness();
      try {
        h.faults.set({ kind: 'error', name });
        expectUnavailable(await call(h.app, 'GET', '/vendor/accounts/prod'), name, RETRY_AFTER_THROTTLED_SECONDS);
        expect(h.faults.attempts.length).toBe(STORE_MAX_ATTEMPTS);
        // A short burst of throttling is absorbed by the SDK's own retries.
        h.faults.set({ kind: 'error', name }, { times: 1 });
        expect((await call(h.app, 'GET', '/vendor/accounts/prod')).status).toBe(200);
      } finally {
        await h.close();
      }
    },
  );
});

describe('a write whose answer is lost (applied, then the connection dropped)', () => {
  it('is acknowledged once, and queued for the driver', async () => {
    const h = await harness();
    try {
      expect((await call(h.app, 'POST', '/vendor/accounts', [{ name: 'acct-0', zoneId: 'zone-a' }])).status).toBe(200);
      // The activation lands; its answer does not; the SDK tries again.
      h.faults.set({ kind: 'lost-answer' }, { only: ['UpdateItem'], times: 1 });
      const res = await call(h.app, 'PATCH', '/vendor/accounts', [{ name: 'acct-0', state: 'ACTIVE' }]);
      h.faults.clear();
      expect(h.faults.injected()).toEqual({ 'lost-answer': 1 });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject([{ name: 'acct-0', state: 'ACTIVE' }]);
      const record = await getAccount(h.healthy, 'acct-0');
      const feed = await everyFeedItem(h.healthy);
      expect(feed.filter((c) => c.name === 'acct-0' && c.action === 'assign').map((c) => c.generation)).toContain(record?.generation);

      // The same for a re-registration of the active account: its new settings must reach the agents.
      h.faults.set({ kind: 'lost-answer' }, { only: ['UpdateItem'], times: 1 });
      const again = await call(h.app, 'POST', '/vendor/accounts', [{ name: 'acct-0', kubeconfigFile: '/etc/kube/new.yaml' }]);
      h.faults.clear();
      expect(again.status, again.text).toBe(200);
      const after = await getAccount(h.healthy, 'acct-0');
      const feedAfter = await everyFeedItem(h.healthy);
      expect(feedAfter.filter((c) => c.name === 'acct-0' && c.action === 'assign').map((c) => c.generation)).toContain(after?.generation);
    } finally {
      await h.close();
    }
  });
});

describe('acknowledged writes under intermittent faults', () => {
  type Op = { kind: 'POST' | 'PATCH' | 'DELETE'; value: string; status: number };
  const WORKERS = ['acct-0', 'acct-1', 'acct-2', 'acct-3'];
  const ROUNDS = 3;

  // Mostly faults that fail at once; a silent or throttled table costs real seconds per try.
  const fault: fc.Arbitrary<StoreFault | undefined> = fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom<StoreFault>({ kind: 'reset' }, { kind: 'refuse' }, { kind: 'lost-answer' }, { kind: 'error', name: 'InternalServerError' }) },
    { weight: 1, arbitrary: fc.constantFrom<StoreFault>({ kind: 'slow', ms: 30 }, { kind: 'slow', ms: 1_500 }, { kind: 'hang' }, { kind: 'error', name: 'ProvisionedThroughputExceededException' }) },
  );
  const step = fc.record({
    fault,
    only: fc.constantFrom(undefined, ['UpdateItem'], ['BatchWriteItem'], ['BatchGetItem', 'Query'], ['UpdateItem', 'BatchWriteItem']),
    skip: fc.nat({ max: 8 }),
    times: fc.integer({ min: 1, max: 16 }),
  });

  /** A client that tries again after a 503, as Retry-After asks (without the wait: the clock is the test's). */
  async function send(h: Harness, method: string, path: string, body?: unknown): Promise<number> {
    let status = 0;
    for (let attempt = 0; attempt < 3; attempt++) {
      status = (await call(h.app, method, path, body)).status;
      if (status !== 503) break;
    }
    return status;
  }

  /** What the account must look like if `op` was the last write to land on it. */
  function holds(op: Op, record: Awaited<ReturnType<typeof getAccount>>): boolean {
    switch (op.kind) {
      case 'POST':
        return record?.registration?.kubeconfigFile === op.value;
      case 'PATCH':
        return record?.registration?.kubeconfigFile === op.value && record.state === 'ACTIVE';
      case 'DELETE':
        return record?.registration === undefined && record?.state === undefined;
    }
  }

  it('every write the API acknowledged is in the table afterwards, queued for the driver, and served once the table is back', async () => {
    const seed = Number(process.env.FAULTS_SEED ?? ((Date.now() ^ (Math.random() * 0x7fffffff)) | 0));
    console.info(`store faults seed: ${seed} (replay: FAULTS_SEED=${seed})`);
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: ROUNDS * 3, maxLength: ROUNDS * 3 }), async (steps) => {
        const h = await harness();
        const log = new Map<string, Op[]>(WORKERS.map((w) => [w, []]));
        try {
          for (const [i, s] of steps.entries()) {
            if (s.fault === undefined) h.faults.clear();
            else h.faults.set(s.fault, { ...(s.only === undefined ? {} : { only: s.only }), skip: s.skip, times: s.times });
            await h.clock.advance(1_000);
            const round = Math.floor(i / 3);
            await Promise.all(
              WORKERS.map(async (name) => {
                const value = `/etc/kube/${name}/${round}/${i % 3}`;
                const ops = log.get(name) as Op[];
                if (i % 3 === 0) ops.push({ kind: 'POST', value, status: await send(h, 'POST', '/vendor/accounts', [{ name, zoneId: 'zone-a', kubeconfigFile: value }]) });
                if (i % 3 === 1) ops.push({ kind: 'PATCH', value, status: await send(h, 'PATCH', '/vendor/accounts', [{ name, kubeconfigFile: value, state: 'ACTIVE' }]) });
                if (i % 3 === 2) ops.push({ kind: 'DELETE', value, status: await send(h, 'DELETE', `/vendor/accounts/${name}`) });
              }),
            );
          }
        } finally {
          // Writes still held back by a slow table never land.
          await h.close();
        }
        const statuses: Record<string, number> = {};
        for (const op of [...log.values()].flat()) statuses[op.status] = (statuses[op.status] ?? 0) + 1;
        console.info(`faults injected ${JSON.stringify(h.faults.injected())}, answers ${JSON.stringify(statuses)}`);
        const feed = await everyFeedItem(h.healthy);
        for (const [name, ops] of log) {
          for (const op of ops) expect([200, 400, 409, 503], `${name} ${op.kind}`).toContain(op.status);
          const record = await getAccount(h.healthy, name);
          const last = ops.findLastIndex((op) => op.status === 200);
          if (last >= 0) {
            // The last acknowledged write, or a later one whose answer was a 503 (it may have landed).
            const candidates = ops.slice(last).filter((op, i) => i === 0 || op.status === 503);
            expect(candidates.some((op) => holds(op, record)), `${name}: ${JSON.stringify(ops)} but the table holds ${JSON.stringify({ registration: record?.registration, state: record?.state })}`).toBe(true);
          }
          const entries = feed.filter((c) => c.name === name);
          expect(entries.filter((c) => c.action === 'assign').length, `${name} activations queued`).toBeGreaterThanOrEqual(ops.filter((o) => o.kind === 'PATCH' && o.status === 200).length);
          expect(entries.filter((c) => c.action === 'remove').length, `${name} removals queued`).toBeGreaterThanOrEqual(ops.filter((o) => o.kind === 'DELETE' && o.status === 200).length);
        }
        // A new client of the same table (the faulty one is closed) is served as before.
        const app = createApp({ table: h.healthy, clock: h.clock, auth: adminTokenAuth() });
        expect((await call(app, 'GET', '/vendor/accounts')).json).toMatchObject({ total: ACCOUNTS.length });
      }),
      { numRuns: 2, seed, endOnFailure: true },
    );
  }, 120_000);
});
