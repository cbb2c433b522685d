import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { useTestTables } from '../../test/support/table.ts';
import { refusalOf } from '../../test/refusal.ts';
import type { Caller } from '../auth/caller.ts';
import { ACCOUNT_CACHE_MS, AccountCache, authorizedAccount } from './account-cache.ts';

const tables = useTestTables();

const caller = (...roles: string[]): Caller => ({ via: 'oidc', subject: roles.join('-'), roles: new Set(roles), manager: false, writesOpenAccounts: true });

async function setup() {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  const define = (writers: string[], namespaces?: string[]) =>
    putAgentStaticAccounts(table, 'agent-1', 'z', [{ name: 'prod', permissions: [{ WRITE: writers }], ...(namespaces === undefined ? {} : { namespaces }) }, { name: 'stage' }, { name: 'dev' }], clock.now());
  await define(['ops']);
  return { table, clock, define, cache: new AccountCache(table, clock) };
}

/** Round trips to the table while `fn` runs. */
async function tripsOf(fn: () => Promise<unknown>): Promise<number> {
  const before = tables.meter.roundTrips;
  await fn();
  return tables.meter.roundTrips - before;
}

describe('accounts kept for authorizing operations', () => {
  it('keeps a read account for ACCOUNT_CACHE_MS, then reads it again', async () => {
    const { cache, clock } = await setup();
    expect(await tripsOf(async () => expect((await cache.get('prod'))?.fresh).toBe(true))).toBe(1);
    expect(await tripsOf(async () => expect(await cache.get('prod')).toMatchObject({ fresh: false, record: { name: 'prod' } }))).toBe(0);
    await clock.advance(ACCOUNT_CACHE_MS - 1);
    expect((await cache.get('prod'))?.fresh).toBe(false);
    await clock.advance(1);
    expect(await tripsOf(async () => expect((await cache.get('prod'))?.fresh).toBe(true))).toBe(1);
  });

  it('reads an account once for requests that ask for it at the same moment', async () => {
    const { cache } = await setup();
    expect(await tripsOf(() => Promise.all([cache.get('prod'), cache.get('prod'), cache.get('prod')]))).toBe(1);
  });

  it('keeps no answer for an account that is not there: one defined a moment later is found at once', async () => {
    const { cache, table, clock } = await setup();
    expect(await cache.get('later')).toBeUndefined();
    await putAgentStaticAccounts(table, 'agent-2', 'z', [{ name: 'later' }], clock.now());
    expect((await cache.get('later'))?.record.name).toBe('later');
  });

  it('keeps a bounded number of accounts, dropping the one read from the table longest ago', async () => {
    const { table, clock } = await setup();
    const cache = new AccountCache(table, clock, { size: 2 });
    await cache.get('prod');
    await cache.get('stage');
    await cache.get('dev');
    expect((await cache.get('stage'))?.fresh).toBe(false);
    expect((await cache.get('dev'))?.fresh).toBe(false);
    expect((await cache.get('prod'))?.fresh).toBe(true);
  });

  it('decides a refusal on a fresh read: a grant applies at once, a revocation within ACCOUNT_CACHE_MS', async () => {
    const { cache, clock, define } = await setup();
    expect((await refusalOf(authorizedAccount(cache, caller('dev'), 'prod', 'WRITE'))).code).toBe('forbidden');
    // Granted: the kept record would refuse, so it is read again and lets the caller through.
    await define(['ops', 'dev']);
    expect((await authorizedAccount(cache, caller('dev'), 'prod', 'WRITE')).fresh).toBe(true);
    // Revoked: the kept record still lets the caller through until it is a second old.
    await define(['ops']);
    expect((await authorizedAccount(cache, caller('dev'), 'prod', 'WRITE')).fresh).toBe(false);
    await clock.advance(ACCOUNT_CACHE_MS);
    expect((await refusalOf(authorizedAccount(cache, caller('dev'), 'prod', 'WRITE'))).code).toBe('forbidden');
    expect((await refusalOf(authorizedAccount(cache, caller('dev'), 'ghost', 'WRITE'))).code).toBe('not_found');
    expect((await refusalOf(authorizedAccount(cache, caller('dev'), 'x'.repeat(300), 'WRITE'))).code).toBe('not_found');
  });
});
