import { describe, expect, it } from 'vitest';
import { apiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';

const tables = useTestTables();

const names = (n: number) => Array.from({ length: n }, (_, i) => `acc-${String(i).padStart(3, '0')}`);

describe('GET /vendor/accounts (docs/api.md#endpoints, docs/api.md#limits)', () => {
  it('defaults to page 1 and limit 100, sorted by name, with the total', async () => {
    const all = names(130);
    const f = await apiFixture(tables, [...all].reverse().map((name) => ({ name })));
    const res = await f.call('GET', '/vendor/accounts');
    expect(res.status).toBe(200);
    expect(res.json.page).toBe(1);
    expect(res.json.limit).toBe(100);
    expect(res.json.total).toBe(130);
    expect((res.json.items as { name: string }[]).map((a) => a.name)).toEqual(all.slice(0, 100));
    const second = await f.call('GET', '/vendor/accounts?page=2');
    expect((second.json.items as { name: string }[]).map((a) => a.name)).toEqual(all.slice(100));
  });

  it('serves any page and limit, and an empty page past the end', async () => {
    const all = names(23);
    const f = await apiFixture(tables, all.map((name) => ({ name })));
    const page3 = await f.call('GET', '/vendor/accounts?page=3&limit=5');
    expect(page3.json).toMatchObject({ page: 3, limit: 5, total: 23 });
    expect((page3.json.items as { name: string }[]).map((a) => a.name)).toEqual(all.slice(10, 15));
    const last = await f.call('GET', '/vendor/accounts?page=5&limit=5');
    expect((last.json.items as { name: string }[]).map((a) => a.name)).toEqual(all.slice(20));
    const past = await f.call('GET', '/vendor/accounts?page=6&limit=5');
    expect(past.status).toBe(200);
    expect(past.json).toEqual({ items: [], page: 6, limit: 5, total: 23 });
    const max = await f.call('GET', '/vendor/accounts?limit=500');
    expect((max.json.items as unknown[]).length).toBe(23);
  });

  it('includes static and dynamic accounts together (docs/api.md#precedence rule 2: different names merge)', async () => {
    const f = await apiFixture(tables, [{ name: 'driver-b' }, { name: 'driver-d' }]);
    await putAgentStaticAccounts(f.table, 'agent-1', 'deploy_ns', [{ name: 'static-a' }, { name: 'static-c' }], f.clock.now());
    const res = await f.call('GET', '/vendor/accounts');
    expect((res.json.items as { name: string; source: string }[]).map((a) => [a.name, a.source])).toEqual([
      ['driver-b', 'driver'],
      ['driver-d', 'driver'],
      ['static-a', 'static-agent-config'],
      ['static-c', 'static-agent-config'],
    ]);
    expect(res.json.total).toBe(4);
  });

  it('returns an empty list on an empty table', async () => {
    const f = await apiFixture(tables);
    expect((await f.call('GET', '/vendor/accounts')).json).toEqual({ items: [], page: 1, limit: 100, total: 0 });
  });
});

describe('GET /vendor/accounts/{accountId} (docs/api.md#endpoints)', () => {
  it('serves the fields of docs/api.md#the-account-served', async () => {
    const f = await apiFixture(tables, [{ name: 'prod', kubeconfigFile: '/k/prod.yml', context: 'ctx', namespaces: ['apps'] }]);
    const res = await f.call('GET', '/vendor/accounts/prod');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      name: 'prod',
      type: 'kubernetes',
      source: 'driver',
      config: { kubeconfigFile: '/k/prod.yml', context: 'ctx', namespaces: ['apps'] },
      agents: [],
      lastAssignmentMsg: '',
    });
  });

  it('serves a static account with its agent zone', async () => {
    const f = await apiFixture(tables);
    await putAgentStaticAccounts(f.table, 'agent-1', 'deploy_ns', [{ name: 'edge', serviceAccount: true }], f.clock.now());
    const res = await f.call('GET', '/vendor/accounts/edge');
    expect(res.json).toMatchObject({ name: 'edge', source: 'static-agent-config', zoneId: 'deploy_ns', config: { serviceAccount: true } });
  });

  it('answers 404 problem details for an unknown account', async () => {
    const f = await apiFixture(tables);
    const res = await f.call('GET', '/vendor/accounts/nope');
    expect(res.status).toBe(404);
    expect(res.type).toBe('application/problem+json');
    expect(res.json).toMatchObject({ status: 404, code: 'not_found', detail: 'no account named "nope"' });
  });
});

describe('other routes', () => {
  it('answers health and unknown routes', async () => {
    const f = await apiFixture(tables);
    expect(await f.call('GET', '/healthz')).toMatchObject({ status: 200, json: { status: 'ok' } });
    const missing = await f.call('GET', '/nope');
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('not_found');
  });
});
