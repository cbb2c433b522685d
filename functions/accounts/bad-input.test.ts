import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../test/support/api.ts';
import { TestTables } from '../../test/support/table.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';

const tables = new TestTables();
let f: ApiFixture;
beforeAll(async () => {
  await tables.start();
  f = await apiFixture(tables, [{ name: 'prod' }, { name: 'stage' }], { maxBodyBytes: 4096 });
});
afterAll(() => tables.close());

async function expectBad(method: string, path: string, body: unknown, status = 400) {
  const res = await f.call(method, path, body);
  expect(res.status).toBe(status);
  expect(res.type).toBe('application/problem+json');
  expect(res.json).toMatchObject({ status, type: expect.stringMatching(/^urn:vendor-agent:problem:/) });
  expect(JSON.stringify(res.json)).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  return res.json as unknown as { code: string; detail: string; errors: { path: string; message: string }[] };
}

describe.each(['POST', 'PATCH'])('%s /vendor/accounts bad bodies', (method) => {
  const state = method === 'PATCH' ? { state: 'ACTIVE' } : {};

  it('malformed JSON', async () => {
    const p = await expectBad(method, '/vendor/accounts', '[{"name": "prod",');
    expect(p.code).toBe('invalid_input');
    expect(p.detail).toMatch(/^malformed JSON/);
  });

  it('empty body', async () => {
    expect((await expectBad(method, '/vendor/accounts', '')).errors).toEqual([{ path: '', message: 'empty body' }]);
  });

  it('not an array', async () => {
    expect((await expectBad(method, '/vendor/accounts', { name: 'prod', ...state })).errors).toEqual([
      { path: '', message: 'must be a JSON array of account records' },
    ]);
  });

  it('empty array', async () => {
    expect((await expectBad(method, '/vendor/accounts', [])).errors).toEqual([{ path: '', message: 'must not be empty' }]);
  });

  it('wrong types, naming every bad element and field', async () => {
    const p = await expectBad(method, '/vendor/accounts', [
      { name: 5, ...state },
      { name: 'prod', zoneId: ['z'], kubeconfigFile: true, ...state },
      'prod',
      null,
    ]);
    expect(p.errors.map((e) => e.path)).toEqual(expect.arrayContaining(['[0].name', '[1].zoneId', '[1].kubeconfigFile', '[2]', '[3]']));
  });

  it('unknown fields', async () => {
    const p = await expectBad(method, '/vendor/accounts', [{ name: 'prod', zone: 'z', ...state }, { name: 'stage', kubeconfig: 'x', ...state }]);
    expect(p.errors).toEqual([
      { path: '[0].zone', message: 'unknown field' },
      { path: '[1].kubeconfig', message: 'unknown field' },
    ]);
  });

  it('duplicate names reported together with other bad fields', async () => {
    const p = await expectBad(method, '/vendor/accounts', [{ name: 'prod', ...state }, { name: 7, ...state }, { name: 'prod', zoneId: 'bad zone', ...state }]);
    expect(p.errors).toEqual([
      { path: '[1].name', message: expect.any(String) },
      { path: '[2].zoneId', message: expect.stringMatching(/^must be letters/) },
      { path: '[2].name', message: 'duplicate name "prod" (first at [0])' },
    ]);
  });

  it('duplicate names in one batch', async () => {
    const p = await expectBad(method, '/vendor/accounts', [{ name: 'prod', ...state }, { name: 'stage', ...state }, { name: 'prod', ...state }]);
    expect(p.errors).toEqual([{ path: '[2].name', message: 'duplicate name "prod" (first at [0])' }]);
  });

  it('empty strings, bad zone ids, both kubeconfig spellings', async () => {
    const p = await expectBad(method, '/vendor/accounts', [
      { name: '', ...state },
      { name: 'prod', zoneId: 'has space', ...state },
      { name: 'stage', kubeconfigFile: '/a', kubeConfigFile: '/b', ...state },
    ]);
    expect(p.errors).toEqual([
      { path: '[0].name', message: 'must not be empty' },
      { path: '[1].zoneId', message: 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit' },
      { path: '[2].kubeConfigFile', message: 'give kubeconfigFile or kubeConfigFile, not both' },
    ]);
  });

  it('kubeconfig contents instead of a reference, and malformed secret references', async () => {
    const contents = 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: s3cr3t-token\n';
    const p = await expectBad(method, '/vendor/accounts', [
      { name: 'prod', kubeconfigFile: contents, ...state },
      { name: 'stage', kubeconfigFile: 'encrypted:', ...state },
      { name: 'dev', kubeconfigFile: '{"apiVersion":"v1","users":[{"user":{"token":"s3cr3t-token"}}]}', ...state },
      { name: 'spaced', kubeconfigFile: 'encryptedFile:nosuchengine!x:y', ...state },
    ]);
    expect(p.errors).toEqual([
      { path: '[0].kubeconfigFile', message: 'must be a file path or a secret reference, not kubeconfig contents' },
      { path: '[1].kubeconfigFile', message: expect.stringMatching(/^invalid encrypted reference: the engine name is missing/) },
      { path: '[2].kubeconfigFile', message: 'must be a file path or a secret reference, not kubeconfig contents' },
      { path: '[3].kubeconfigFile', message: expect.stringMatching(/^invalid encryptedFile reference: the engine is not known/) },
    ]);
    // The refused value is never echoed back.
    expect(JSON.stringify(p)).not.toContain('s3cr3t-token');
  });

  it('many bad elements: the answer names the first 100 and counts the rest, whatever the body held', async () => {
    const p = await expectBad(method, '/vendor/accounts', `[${Array.from({ length: 499 }, () => '1').join(',')}]`);
    expect(p.errors).toHaveLength(101);
    expect(p.errors[0]).toEqual({ path: '[0]', message: expect.any(String) });
    expect(p.errors[100]).toEqual({ path: '', message: '399 more problems not listed' });
    expect(p.detail.length).toBeLessThanOrEqual(2_001);
  });

  it('more than 1,000 records: that alone is the answer, the records are not checked', async () => {
    const p = await expectBad(method, '/vendor/accounts', `[${Array.from({ length: 1001 }, () => '1').join(',')}]`);
    expect(p.errors).toEqual([{ path: '', message: 'must hold at most 1000 records' }]);
  });

  it('oversize body: 413', async () => {
    const big = Array.from({ length: 200 }, (_, i) => ({ name: `account-name-${i}`, ...state }));
    expect((await expectBad(method, '/vendor/accounts', big, 413)).code).toBe('payload_too_large');
  });

  it('changes nothing', async () => {
    expect((await getAccount(f.table, 'prod'))?.registration).toBeUndefined();
  });
});

describe('GET /vendor/accounts bad page and limit', () => {
  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=1&page=2', 'page'],
    ['page=99999999999999999999', 'page'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=1e2', 'limit'],
    ['limit=%20', 'limit'],
    ['size=10', 'size'],
    // Names of Object.prototype members are unknown parameters like any other.
    ['__proto__=1', '__proto__'],
    ['__proto__=1&__proto__=2', '__proto__'],
    ['constructor=1', 'constructor'],
    ['toString=1&page=1', 'toString'],
  ])('?%s names %s', async (query, path) => {
    const p = await expectBad('GET', `/vendor/accounts?${query}`, undefined);
    expect(p.code).toBe('invalid_input');
    expect(p.errors.map((e) => e.path)).toEqual([path]);
  });

  it('names both when both are bad', async () => {
    const p = await expectBad('GET', '/vendor/accounts?page=0&limit=x', undefined);
    expect(p.errors.map((e) => e.path)).toEqual(['page', 'limit']);
  });
});

describe('no input produces a 500', () => {
  it('odd paths and methods', async () => {
    for (const [method, path] of [
      ['GET', '/vendor/accounts/%E0%A4%A'],
      ['GET', `/vendor/accounts/${'x'.repeat(2000)}`],
      ['DELETE', '/vendor/accounts/%00'],
      ['PUT', '/vendor/accounts'],
      ['DELETE', '/vendor/accounts'],
    ] as const) {
      const res = await f.call(method, path);
      expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path}`).toBeLessThan(500);
      expect(res.type).toBe('application/problem+json');
    }
  });
});
