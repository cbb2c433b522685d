import { describe, expect, it } from 'vitest';
import { apiFixture, TEST_ADMIN_TOKEN, type ApiFixture } from '../../test/support/api.ts';
import { oidcConfig } from '../../test/support/oidc.ts';
import { useRoleIssuer } from '../../test/support/role-callers.ts';
import { useTestTables } from '../../test/support/table.ts';
import { createApiAuth, type ApiAuth } from '../auth/authenticator.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { followAccountFacets } from '../../shared/table/accounts/facets.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';

const tables = useTestTables();

/**
 * Driver accounts `d-00`..`d-11`: registered in zone-a (even) or with no zone (odd); of those `d-00`,
 * `d-01` ACTIVE and `d-02` FAILED, `d-10`, `d-11` never registered. Static accounts `s-0`..`s-2` of
 * an agent in zone-b, and `guarded` (zone-b), readable only with the role `dev`.
 */
async function world(auth?: ApiAuth): Promise<ApiFixture> {
  const driver = Array.from({ length: 12 }, (_, i) => ({ name: `d-${String(i).padStart(2, '0')}` }));
  const f = await apiFixture(tables, driver, auth === undefined ? {} : { auth });
  await putAgentStaticAccounts(f.table, 'agent-b', 'zone-b', [{ name: 's-0' }, { name: 's-1' }, { name: 's-2' }, { name: 'guarded', permissions: [{ READ: ['dev'] }] }], f.clock.now());
  const registrations = driver.slice(0, 10).map((d, i) => (i % 2 === 0 ? { name: d.name, zoneId: 'zone-a' } : { name: d.name }));
  await f.call('POST', '/vendor/accounts', registrations);
  for (const [name, state] of [['d-00', 'ACTIVE'], ['d-01', 'ACTIVE'], ['d-02', 'FAILED']] as const) {
    const record = await getAccount(f.table, name, { consistent: true });
    // As the driver does when it changes a state: the facet index follows.
    await followAccountFacets(f.table, [await updateAccount(f.table, name, record!.version, { state }, f.clock.now())]);
  }
  return f;
}

const names = (res: { json: Record<string, unknown> }) => (res.json.items as { name: string }[]).map((a) => a.name);

describe('GET /vendor/accounts filters (docs/api.md#filters)', () => {
  it('narrows by state, zone, source and name prefix, each and together, keeping the sort; total counts the filtered set', async () => {
    const f = await world();
    const list = (query: string) => f.call('GET', `/vendor/accounts${query}`);
    expect(names(await list('?state=ACTIVE'))).toEqual(['d-00', 'd-01']);
    expect(names(await list('?state=FAILED,ACTIVE'))).toEqual(['d-00', 'd-01', 'd-02']);
    expect((await list('?state=INACTIVE')).json.total).toBe(7);
    expect(names(await list('?zoneId=zone-b'))).toEqual(['guarded', 's-0', 's-1', 's-2']);
    expect(names(await list('?zoneId=zone-a&state=INACTIVE'))).toEqual(['d-04', 'd-06', 'd-08']);
    expect(names(await list('?source=static-agent-config&namePrefix=s-'))).toEqual(['s-0', 's-1', 's-2']);
    expect((await list('?source=driver')).json.total).toBe(12);
    expect(names(await list('?namePrefix=d-1'))).toEqual(['d-10', 'd-11']);
    expect(names(await list('?namePrefix=nothing'))).toEqual([]);
    const paged = await list('?zoneId=zone-a&limit=2&page=2');
    expect(paged.json).toMatchObject({ page: 2, limit: 2, total: 5 });
    expect(names(paged)).toEqual(['d-04', 'd-06']);
    expect((await list('?zoneId=zone-a&limit=2&page=4')).json).toEqual({ items: [], page: 4, limit: 2, total: 5 });
    expect(names(await list('?namePrefix=d-0&limit=3&page=3'))).toEqual(['d-06', 'd-07', 'd-08']);
    expect((await list('?namePrefix=d-0&limit=3&page=3')).json.total).toBe(10);
    expect((await list('?namePrefix=d-0&limit=3&page=5')).json).toEqual({ items: [], page: 5, limit: 3, total: 10 });
  });

  it('answers bad filters with a 400 problem naming each parameter', async () => {
    const f = await world();
    for (const [query, paths] of [
      ['?state=DONE', ['state']],
      ['?state=active', ['state']],
      ['?state=', ['state']],
      ['?state=ACTIVE,', ['state']],
      ['?zoneId=', ['zoneId']],
      ['?zoneId=zone a', ['zoneId']],
      ['?source=agent', ['source']],
      ['?namePrefix=', ['namePrefix']],
      ['?namePrefix=-x', ['namePrefix']],
      ['?namePrefix=a%00b', ['namePrefix']],
      [`?namePrefix=${'a'.repeat(254)}`, ['namePrefix']],
      ['?prefix=d', ['prefix']],
      ['?state=ACTIVE&state=FAILED', ['state']],
      ['?state=NOPE&zoneId=-&page=0', ['page', 'state', 'zoneId']],
    ] as const) {
      const res = await f.call('GET', `/vendor/accounts${query}`);
      expect(res.status, query).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect((res.json.errors as { path: string }[]).map((e) => e.path).sort(), query).toEqual([...paths].sort());
    }
  });
});

describe('GET /vendor/account-summary (docs/api.md#the-account-summary)', () => {
  it('counts by state, zone and source in one request', async () => {
    const f = await world();
    const res = await f.call('GET', '/vendor/account-summary');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      total: 16,
      byState: { INACTIVE: 7, ACTIVE: 2, FAILED: 1 },
      withoutState: 6,
      byZone: { 'zone-a': 5, 'zone-b': 4 },
      withoutZone: 7,
      bySource: { driver: 12, 'static-agent-config': 4 },
    });
    expect((await f.call('GET', '/vendor/account-summary?zoneId=zone-a')).status).toBe(400);
    // An account named `summary` is still the account's own path.
    expect((await f.call('GET', '/vendor/accounts/summary')).status).toBe(404);
  });
});

describe('filters and summary for callers who may not read everything', () => {
  const roles = useRoleIssuer();

  it('leave out the accounts the caller may not read, in the items and in every count', async () => {
    const f = await world(createApiAuth({ oidc: oidcConfig(roles.issuer()), adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: false }));
    const outsider = await roles.token('outsider', 'nobody');
    const zoneB = await f.call('GET', '/vendor/accounts?zoneId=zone-b', undefined, outsider);
    expect(names(zoneB)).toEqual(['s-0', 's-1', 's-2']);
    expect(zoneB.json.total).toBe(3);
    const prefix = await f.call('GET', '/vendor/accounts?namePrefix=g', undefined, outsider);
    expect(prefix.json).toMatchObject({ items: [], total: 0 });
    const summary = await f.call('GET', '/vendor/account-summary', undefined, outsider);
    expect(summary.json).toMatchObject({ total: 15, byZone: { 'zone-a': 5, 'zone-b': 3 }, bySource: { driver: 12, 'static-agent-config': 3 } });

    const dev = await roles.token('developer', 'dev');
    expect(names(await f.call('GET', '/vendor/accounts?namePrefix=g', undefined, dev))).toEqual(['guarded']);
    expect((await f.call('GET', '/vendor/account-summary', undefined, dev)).json.total).toBe(16);
  });
});
