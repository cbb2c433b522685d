import { describe, expect, it } from 'vitest';
import { apiFixture, TEST_ADMIN_TOKEN } from '../../test/support/api.ts';
import { oidcConfig } from '../../test/support/oidc.ts';
import { useRoleIssuer } from '../../test/support/role-callers.ts';
import { useTestTables } from '../../test/support/table.ts';
import { createApiAuth } from '../auth/authenticator.ts';
import { MAX_CALLER_ACCOUNTS } from './caller-routes.ts';

const tables = useTestTables();
const roles = useRoleIssuer();

const ACCOUNTS = [
  { name: 'open' },
  { name: 'guarded', permissions: [{ READ: ['dev'], WRITE: ['ops'] }] },
  { name: 'secret', permissions: [{ READ: ['ops'] }] },
  { name: '__proto__' },
];

async function fixture(openAccounts?: 'readOnly' | 'readWrite') {
  const auth = createApiAuth(
    { adminToken: TEST_ADMIN_TOKEN, oidc: oidcConfig(roles.issuer()), accountManagerRoles: ['admins'], ...(openAccounts === undefined ? {} : { openAccounts }) },
    { production: false },
  );
  return apiFixture(tables, ACCOUNTS, { auth });
}

const ALL = 'accounts=open,guarded,secret,__proto__,ghost';

describe('GET /vendor/caller', () => {
  it('tells the admin token it manages everything', async () => {
    const f = await fixture();
    const res = await f.call('GET', `/vendor/caller?${ALL}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      via: 'admin-token',
      subject: 'admin-token',
      roles: [],
      manager: true,
      accounts: [
        { name: 'open', read: true, write: true },
        { name: 'guarded', read: true, write: true },
        { name: 'secret', read: true, write: true },
        { name: '__proto__', read: true, write: true },
      ],
    });
  });

  it('answers per account what the access rule of every route decides for an OIDC caller', async () => {
    const f = await fixture();
    const dev = await f.call('GET', `/vendor/caller?${ALL}`, undefined, await roles.token('dana', 'dev'));
    expect(dev.json).toEqual({
      via: 'oidc',
      subject: 'dana',
      roles: ['dev'],
      manager: false,
      accounts: [
        { name: 'open', read: true, write: true },
        { name: 'guarded', read: true, write: false },
        { name: 'secret', read: false, write: false },
        { name: '__proto__', read: true, write: true },
      ],
    });
    const ops = await f.call('GET', '/vendor/caller?accounts=guarded,secret', undefined, await roles.token('olga', 'ops'));
    expect(ops.json.accounts).toEqual([
      { name: 'guarded', read: true, write: true },
      { name: 'secret', read: true, write: false },
    ]);
    const admins = await f.call('GET', '/vendor/caller', undefined, await roles.token('ann', 'admins'));
    expect(admins.json).toMatchObject({ manager: true, accounts: [] });
  });

  it('follows api.auth.openAccounts for accounts without permissions', async () => {
    const f = await fixture('readOnly');
    const dev = await f.call('GET', '/vendor/caller?accounts=open', undefined, await roles.token('dana', 'dev'));
    expect(dev.json.accounts).toEqual([{ name: 'open', read: true, write: false }]);
  });

  it('agrees with what the routes then do', async () => {
    const f = await fixture();
    const token = await roles.token('dana', 'dev');
    const told = (await f.call('GET', '/vendor/caller?accounts=open,guarded,secret', undefined, token)).json.accounts as { name: string; read: boolean }[];
    for (const { name, read } of told) expect((await f.call('GET', `/vendor/accounts/${name}`, undefined, token)).status, name).toBe(read ? 200 : 403);
  });

  it('refuses bad queries naming the parameter, and callers without a token', async () => {
    const f = await fixture();
    for (const query of ['accounts=', 'accounts=a,,b', 'accounts=a,a', `accounts=${'x'.repeat(254)}`, `accounts=${Array.from({ length: MAX_CALLER_ACCOUNTS + 1 }, (_, i) => `a${i}`).join(',')}`]) {
      const res = await f.call('GET', `/vendor/caller?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.errors, query).toEqual([expect.objectContaining({ path: 'accounts' })]);
    }
    expect((await f.call('GET', '/vendor/caller?acounts=open')).json.errors).toEqual([expect.objectContaining({ path: 'acounts' })]);
    expect((await f.call('GET', '/vendor/caller', undefined, null)).status).toBe(401);
  });
});
