import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { parseLine } from './args.ts';
import { main } from './main.ts';
import { renderTable } from './output.ts';
import { parseTarget } from './targets.ts';

const TOKEN = 'in-process-token-0123456789abcdef';

/** A fake API answering GET /vendor/operations/{id}?wait=N by letting N seconds pass on the clock. */
function operationsApi(clock: ManualClock, states: readonly string[], over: Record<string, unknown> = {}) {
  const requests: { method: string; url: string; headers: Record<string, string>; body?: unknown }[] = [];
  let i = 0;
  // As the API serves it (shared/answers/operations.ts).
  const at = '2026-11-28T10:00:00.000Z';
  const op = () => ({
    id: 'op1',
    account: 'prod',
    action: 'scale',
    state: states[Math.min(i, states.length - 1)],
    idempotencyKey: 'k1',
    objects: 1,
    createdAt: at,
    updatedAt: at,
    attempts: 1,
    message: states[i] === 'FAILED' ? '1 of 1 objects failed' : '',
    outcomes: [],
    ...over,
  });
  const fetchImpl = async (url: string | URL | Request, init?: RequestInit) => {
    const headers = init?.headers as Record<string, string>;
    requests.push({ method: init?.method ?? 'GET', url: String(url), headers, ...(init?.body === undefined ? {} : { body: JSON.parse(String(init.body)) }) });
    const wait = /[?&]wait=(\d+)/.exec(String(url))?.[1];
    if (wait !== undefined) await clock.advance(Number(wait) * 1000);
    const answer = op();
    i += 1;
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { requests, fetch: fetchImpl as typeof fetch };
}

async function run(argv: string[], api: { fetch: typeof fetch }, clock: ManualClock) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    env: { VENDOR_API_TOKEN: TOKEN, VENDOR_API_URL: 'http://api.test' },
    stdin: async () => '',
    fetch: api.fetch,
    clock,
  });
  return { code, out: out.join(''), err: err.join('') };
}

describe('vendorctl operations and --wait', () => {
  it('sends a checked body with the idempotency key and the token, and follows with the API\'s own wait', async () => {
    const clock = new ManualClock(0);
    const api = operationsApi(clock, ['QUEUED', 'RUNNING', 'SUCCEEDED']);
    const result = await run(['operations', 'scale', 'prod', 'deployment/web', '-n', 'shop', '--replicas', '3', '--idempotency-key', 'k1', '--wait'], api, clock);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^ID +ACCOUNT +ACTION +STATE +OBJECTS +ERROR +MESSAGE\nop1 +prod +scale +SUCCEEDED +1 +- +-\n$/);
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      url: 'http://api.test/vendor/accounts/prod/operations?wait=60',
      headers: { authorization: `Bearer ${TOKEN}`, 'idempotency-key': 'k1' },
      body: { action: 'scale', replicas: 3, targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }] },
    });
    expect(api.requests.slice(1).map((r) => r.url)).toEqual(['http://api.test/vendor/operations/op1?wait=60', 'http://api.test/vendor/operations/op1?wait=60']);
  });

  it('waits at most --wait=SECONDS, then exits 1 saying the operation has not finished', async () => {
    const clock = new ManualClock(0);
    const api = operationsApi(clock, ['RUNNING']);
    const result = await run(['operations', 'get', 'op1', '--wait=90'], api, clock);
    expect(result.code).toBe(1);
    expect(result.err).toBe('operation op1 had not finished after 90 s (RUNNING)\n');
    expect(api.requests.map((r) => r.url)).toEqual([
      'http://api.test/vendor/operations/op1',
      'http://api.test/vendor/operations/op1?wait=60',
      'http://api.test/vendor/operations/op1?wait=30',
    ]);
  });

  it('exits 1 for an operation that ended FAILED, 0 for one still running without --wait', async () => {
    const clock = new ManualClock(0);
    const failed = await run(['operations', 'get', 'op1'], operationsApi(clock, ['FAILED']), clock);
    expect(failed.code).toBe(1);
    expect(failed.err).toBe('operation op1 ended FAILED: 1 of 1 objects failed\n');
    // One that failed as a whole says its code beside its message.
    const refusal = { errorCode: 'invalid_input', message: 'invalid_input: the operation is invalid: scale.replicas: must be at most 1000000' };
    const refused = await run(['operations', 'get', 'op1'], operationsApi(clock, ['FAILED'], refusal), clock);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^ID +ACCOUNT +ACTION +STATE +OBJECTS +ERROR +MESSAGE\nop1 +prod +scale +FAILED +1 +invalid_input +invalid_input: the operation is invalid: /);
    expect(refused.err).toBe(`operation op1 ended FAILED (invalid_input): ${refusal.message}\n`);
    expect((await run(['operations', 'get', 'op1', '-o', 'json'], operationsApi(clock, ['RUNNING']), clock)).code).toBe(0);
  });
});

describe('vendorctl arguments', () => {
  it('reads --wait alone as "until it finishes" and --wait=N as at most N seconds', () => {
    expect(parseLine(['operations', 'get', 'x', '--wait']).flags.wait).toBe('');
    expect(parseLine(['operations', 'get', 'x', '--wait=5']).flags.wait).toBe('5');
    expect(parseLine(['operations', 'get', '--', '--wait']).positionals).toEqual(['operations', 'get', '--wait']);
  });

  it('refuses a --token flag without echoing its value', () => {
    expect(() => parseLine(['accounts', 'list', '--token=s3cret-value'])).toThrow(/there is no --token flag/);
    try {
      parseLine(['accounts', 'list', '--token', 's3cret-value']);
    } catch (e) {
      expect((e as Error).message).not.toContain('s3cret-value');
    }
  });

  it('names objects as KIND/NAME, knowing the apiVersion of common kinds', () => {
    expect(parseTarget('deployment/web', { namespace: 'shop' })).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
    expect(parseTarget('Widget/w', { apiVersion: 'example.com/v1' })).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w' });
    expect(() => parseTarget('Widget/w', {})).toThrow(/--api-version/);
    expect(() => parseTarget('web', {})).toThrow(/is not KIND\/NAME/);
    expect(() => parseTarget('deployment/a/b', {})).toThrow(/is not a valid object/);
  });

  it('prints readable columns', () => {
    expect(renderTable({ columns: ['NAME', 'STATE'], rows: [['a-long-name', 'ACTIVE'], ['b', '-']] })).toBe('NAME         STATE\na-long-name  ACTIVE\nb            -\n');
  });
});
