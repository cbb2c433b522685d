import { describe, expect, it } from 'vitest';
import { CacheCleanupLoop } from '../driver/resources/cache-cleanup.ts';
import { silentLogger } from '../shared/log.ts';
import { pendingCacheCleanups } from '../shared/table/resources/cleanup.ts';
import { putAgentStaticAccounts } from '../shared/table/sources/agent-static.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { cacheCount, seedCache } from './support/account-cache.ts';
import { apiFixture, type ApiFixture } from './support/api.ts';
import { useTestTables } from './support/table.ts';

const tables = useTestTables();
const DELAY = 30_000;

async function migrated(f: ApiFixture, name: string): Promise<void> {
  await f.connectAgent('agent-1', 'z');
  expect((await f.call('POST', '/vendor/accounts', [{ name, zoneId: 'z' }])).status).toBe(200);
  expect((await f.call('PATCH', '/vendor/accounts', [{ name, state: 'ACTIVE' }])).status).toBe(200);
}

function cleanupPass(f: ApiFixture) {
  return new CacheCleanupLoop({ table: f.table, clock: f.clock, log: silentLogger(), holder: 'replica-1' }, { delayMs: DELAY }).pass();
}

describe('what DELETE and a source removal take with the account (docs/api.md#semantics-of-the-writes)', () => {
  it('DELETE of a migrated account: its cached resources, health and metrics go', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }, { name: 'stage' }]);
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 40);
    expect(((await f.call('GET', '/vendor/accounts/prod/resources?limit=100')).json.items as unknown[]).length).toBe(40);
    expect((await f.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    await f.clock.advance(DELAY);
    expect(await cleanupPass(f)).toEqual(new Map([['prod', 'done']]));
    expect(await cacheCount(f.table, 'prod')).toBe(0);
    expect((await f.call('GET', '/vendor/accounts/prod/resources')).json.items).toEqual([]);
  });

  it('after DELETE the cache is not served while its cleanup proceeds: the resource endpoints answer as for an account that does not exist', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 5);
    const paths = ['resources', 'cache', 'metrics'];
    for (const path of paths) expect((await f.call('GET', `/vendor/accounts/prod/${path}`)).status).toBe(200);
    expect((await f.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    for (const path of paths) {
      const ghost = (await f.call('GET', `/vendor/accounts/ghost/${path}`)).json;
      const res = await f.call('GET', `/vendor/accounts/prod/${path}`);
      expect([res.status, res.type, res.json]).toEqual([404, 'application/problem+json', { ...ghost, detail: 'no account named "prod"', instance: `/vendor/accounts/prod/${path}` }]);
    }
    // The account itself is still defined by its source.
    expect((await f.call('GET', '/vendor/accounts/prod')).status).toBe(200);
    await f.clock.advance(DELAY);
    expect(await cleanupPass(f)).toEqual(new Map([['prod', 'done']]));
    // Nothing left to hide: the account answers as one nothing has cached yet.
    expect((await f.call('GET', '/vendor/accounts/prod/resources')).json.items).toEqual([]);
    expect((await f.call('GET', '/vendor/accounts/prod/cache')).json).toMatchObject({ reportedBy: null, kinds: [] });
  });

  it('a POST again after DELETE serves the kept cache again', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 5);
    expect((await f.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    expect((await f.call('GET', '/vendor/accounts/prod/resources')).status).toBe(404);
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }])).status).toBe(200);
    expect(((await f.call('GET', '/vendor/accounts/prod/resources')).json.items as unknown[]).length).toBe(5);
  });

  it('DELETE keeps the cache of an account an agent still announces as a static account', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z', [{ name: 'prod' }], f.clock.now());
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 5);
    expect((await f.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    expect(await pendingCacheCleanups(f.table)).toEqual([]);
    await f.clock.advance(DELAY);
    await cleanupPass(f);
    expect(await cacheCount(f.table, 'prod')).toBe(10);
  });

  it('a POST again before the cleanup ran keeps the account its new data', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 5, 'old');
    expect((await f.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'prod', zoneId: 'z' }])).status).toBe(200);
    await seedCache(f.table, 'prod', 5, 'new');
    await f.clock.advance(DELAY);
    expect(await cleanupPass(f)).toEqual(new Map([['prod', 'cancelled']]));
    expect(await cacheCount(f.table, 'prod')).toBe(15);
  });

  it('an account its source dropped is not found by the resource endpoints while its cleanup waits', async () => {
    const f = await apiFixture(tables, [{ name: 'prod' }]);
    await migrated(f, 'prod');
    await seedCache(f.table, 'prod', 5);
    await syncSource(f.table, { id: 'driver-config', kind: 'driver-config' }, [], f.clock.now());
    for (const path of ['resources', 'cache', 'metrics']) expect((await f.call('GET', `/vendor/accounts/prod/${path}`)).status).toBe(404);
    await f.clock.advance(DELAY);
    expect(await cleanupPass(f)).toEqual(new Map([['prod', 'done']]));
    expect(await cacheCount(f.table, 'prod')).toBe(0);
  });
});
