import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessKey } from '../../shared/table/accounts/keys.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { writeResources } from '../../shared/table/resources/objects.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { apiFixture } from '../../test/support/api.ts';
import { TestIssuer, oidcConfig } from '../../test/support/oidc.ts';
import { TestTables } from '../../test/support/table.ts';
import { requireAccountAccess } from './access.ts';
import { createApiAuth } from './authenticator.ts';

const tables = new TestTables();
let issuer: TestIssuer;
let kid: string;
beforeAll(async () => {
  await tables.start();
  issuer = await TestIssuer.start();
  kid = await issuer.addKey('ES256');
});
afterAll(async () => {
  await issuer.close();
  await tables.close();
});

const ACCOUNTS: AccountSettings[] = [
  { name: 'dev-only', permissions: [{ READ: ['dev'] }] },
  { name: 'open-a' },
  { name: 'ops-write', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] },
  { name: 'spaced', permissions: [{ READ: ['dev'] }, { WRITE: ['release team'] }] },
  { name: 'write-only', permissions: [{ WRITE: ['ops'] }] },
];

async function app(accounts: AccountSettings[] = ACCOUNTS) {
  const clock = new ManualClock(1_700_000_000_000);
  const capture = captureLogger();
  const auth = createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: ['vendor-admins'] }, { production: false, clock, logger: capture.log });
  const f = await apiFixture(tables, accounts, { auth, logger: capture.log });
  issuer.now = () => Math.floor(clock.now() / 1000);
  const as = async (...groups: string[]) => issuer.token({ sub: `user-${groups.join('-')}`, groups }, { kid });
  return { ...f, capture, as };
}

const names = (json: Record<string, unknown>) => (json.items as { name: string }[]).map((a) => a.name);

describe('who may read which account (docs/api.md#authorization)', () => {
  it('lists only what the caller may read, and counts only that in total', async () => {
    const f = await app();
    const list = async (token: string) => (await f.call('GET', '/vendor/accounts', undefined, token)).json;
    expect(await list(await f.as('dev'))).toMatchObject({ total: 4 });
    expect(names(await list(await f.as('dev')))).toEqual(['dev-only', 'open-a', 'ops-write', 'spaced']);
    // WRITE roles may read too.
    expect(names(await list(await f.as('ops')))).toEqual(['open-a', 'ops-write', 'spaced', 'write-only']);
    expect(await list(await f.as())).toEqual({ items: [expect.objectContaining({ name: 'open-a' }), expect.objectContaining({ name: 'spaced' })], page: 1, limit: 100, total: 2 });
    expect(names(await list(await f.as('dev', 'ops')))).toEqual(ACCOUNTS.map((a) => a.name));
    expect(await list(await f.as('vendor-admins'))).toMatchObject({ total: 5 });
    // Pages count what the caller sees.
    expect(await (await f.call('GET', '/vendor/accounts?page=2&limit=1', undefined, await f.as()))).toMatchObject({
      json: { items: [{ name: 'spaced' }], page: 2, limit: 1, total: 2 },
    });
    expect((await f.call('GET', '/vendor/accounts?page=3&limit=1', undefined, await f.as())).json).toEqual({ items: [], page: 3, limit: 1, total: 2 });
  });

  it('GET by id: 200 with a READ or WRITE role, 403 without, 404 for an unknown name', async () => {
    const f = await app();
    const get = async (name: string, token: string) => f.call('GET', `/vendor/accounts/${name}`, undefined, token);
    expect((await get('dev-only', await f.as('dev'))).status).toBe(200);
    expect((await get('write-only', await f.as('ops'))).status).toBe(200);
    expect((await get('open-a', await f.as())).status).toBe(200);
    expect((await get('dev-only', await f.as('vendor-admins'))).status).toBe(200);
    const denied = await get('dev-only', await f.as('ops', 'DEV'));
    expect(denied.status).toBe(403);
    expect(denied.type).toBe('application/problem+json');
    expect(denied.json).toMatchObject({ status: 403, code: 'forbidden', detail: 'not allowed to read account "dev-only"' });
    expect(JSON.stringify(denied.json)).not.toContain('"dev"'); // the roles that would do are not told
    expect(denied.headers.get('www-authenticate')).toBeNull();
    expect((await get('nope', await f.as('dev'))).status).toBe(404);
  });

  it('role names with whitespace: permissions not applied, flagged on the account, warned once (docs/agent-config.md#permissions)', async () => {
    const f = await app();
    const res = await f.call('GET', '/vendor/accounts/spaced', undefined, await f.as());
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: 'spaced', permissionsIgnored: true, permissionsIgnoredReason: expect.stringContaining('"release team"') });
    await f.call('GET', '/vendor/accounts', undefined, await f.as());
    const warnings = f.capture.lines.filter((l) => l.msg === 'account permissions are NOT applied: it is open to every caller like an account without permissions');
    expect(warnings).toEqual([expect.objectContaining({ level: 40, account: 'spaced', reason: expect.stringContaining('"release team"') })]);
    const plain = await f.call('GET', '/vendor/accounts/dev-only', undefined, await f.as('dev'));
    expect(plain.json).not.toHaveProperty('permissionsIgnored');
  });

  it("follows the winning definition: an agent's static account without permissions opens it (docs/api.md#precedence)", async () => {
    const f = await app();
    const dev = await f.as();
    expect((await f.call('GET', '/vendor/accounts/dev-only', undefined, dev)).status).toBe(403);
    await putAgentStaticAccounts(f.table, 'agent-1', 'z_ns', [{ name: 'dev-only', serviceAccount: true }], f.clock.now());
    expect((await f.call('GET', '/vendor/accounts/dev-only', undefined, dev)).status).toBe(200);
    expect(names((await f.call('GET', '/vendor/accounts', undefined, dev)).json)).toContain('dev-only');
    // The agent now announces only a restricted `open-a`: that closes `open-a`, and `dev-only` falls
    // back to the config file's permissions.
    await putAgentStaticAccounts(f.table, 'agent-1', 'z_ns', [{ name: 'open-a', permissions: [{ READ: ['edge'] }] }], f.clock.now());
    expect((await f.call('GET', '/vendor/accounts/open-a', undefined, dev)).status).toBe(403);
    expect((await f.call('GET', '/vendor/accounts/dev-only', undefined, dev)).status).toBe(403);
    expect((await f.call('GET', '/vendor/accounts', undefined, dev)).json).toMatchObject({ total: 1, items: [{ name: 'spaced' }] });
  });
});

describe('an access index that trails the accounts', () => {
  it('can hide or miscount, but never serves an account the caller may not read', async () => {
    const f = await app();
    // As if the entry of `dev-only` had not been written yet.
    await f.table.client.send(new DeleteCommand({ TableName: f.table.tableName, Key: accessKey('dev-only') }));
    const list = (await f.call('GET', '/vendor/accounts', undefined, await f.as())).json;
    expect(names(list)).toEqual(['open-a', 'spaced']);
    expect(list.total).toBe(3); // counted until the next sync repairs the entry
    expect((await f.call('GET', '/vendor/accounts/dev-only', undefined, await f.as())).status).toBe(403);
  });
});

describe('who may manage accounts', () => {
  it('POST, PATCH and DELETE need an account-manager role: 403 before the body is looked at', async () => {
    const f = await app();
    for (const token of [await f.as('dev', 'ops'), await f.as()]) {
      for (const [method, path, body] of [
        ['POST', '/vendor/accounts', [{ name: 'open-a' }]],
        ['POST', '/vendor/accounts', 'not json'],
        ['PATCH', '/vendor/accounts', [{ name: 'open-a', state: 'ACTIVE' }]],
        ['DELETE', '/vendor/accounts/open-a', undefined],
        ['DELETE', '/vendor/accounts/ghost', undefined],
      ] as const) {
        const res = await f.call(method, path, body, token);
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.json).toMatchObject({ code: 'forbidden', detail: 'managing accounts needs an account-manager role' });
      }
    }
    expect((await f.call('GET', '/vendor/accounts/open-a', undefined, await f.as('vendor-admins'))).json).not.toHaveProperty('state');
    const manager = await f.as('vendor-admins');
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'open-a' }], manager)).status).toBe(200);
    expect((await f.call('DELETE', '/vendor/accounts/open-a', undefined, manager)).status).toBe(200);
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'open-a' }], null)).status).toBe(401);
  });
});

describe('what the cache reports of an account (resources, cache health, pod metrics)', () => {
  it('is read like the account: a READ or WRITE role, or a manager; 403 without, 404 for an unknown name, 401 without credentials', async () => {
    const f = await app();
    await writeResources(f.table, 'dev-only', [
      { op: 'put', ref: { group: '', kind: 'ConfigMap', namespace: 'shop', name: 'settings' }, resourceVersion: '3', object: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop"}}', at: f.clock.now() },
    ]);
    for (const what of ['resources', 'cache', 'metrics']) {
      const get = async (name: string, token: string | null) => f.call('GET', `/vendor/accounts/${name}/${what}`, undefined, token);
      expect((await get('dev-only', await f.as('dev'))).status, what).toBe(200);
      expect((await get('dev-only', await f.as('vendor-admins'))).status, what).toBe(200);
      expect((await get('write-only', await f.as('ops'))).status, what).toBe(200);
      expect((await get('open-a', await f.as())).status, what).toBe(200);
      const denied = await get('dev-only', await f.as('ops'));
      expect(denied.status, what).toBe(403);
      expect(denied.json, what).toMatchObject({ code: 'forbidden', detail: 'not allowed to read account "dev-only"' });
      expect(JSON.stringify(denied.json), what).not.toContain('settings');
      // What is wrong with a query does not depend on the account: told before the account is read.
      expect((await f.call('GET', `/vendor/accounts/dev-only/${what}?bogus=1`, undefined, await f.as('ops'))).status, what).toBe(400);
      expect((await f.call('GET', `/vendor/accounts/nope/${what}?bogus=1`, undefined, await f.as('dev'))).status, what).toBe(400);
      expect((await get('nope', await f.as('dev'))).status, what).toBe(404);
      expect((await get('dev-only', null)).status, what).toBe(401);
    }
    const page = (await f.call('GET', '/vendor/accounts/dev-only/resources', undefined, await f.as('dev'))).json;
    expect(page.items).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: 'settings' })]);
  });
});

describe('requireAccountAccess, the guard for routes under one account', () => {
  it('checks READ or WRITE on the account named by the path and hands it to the handler', async () => {
    const f = await app();
    const deps = { table: f.table };
    f.app.get('/vendor/accounts/:accountId/probe-read', requireAccountAccess(deps, 'READ'), (c) => c.json({ name: c.get('account').name }));
    f.app.post('/vendor/accounts/:accountId/probe-write', requireAccountAccess(deps, 'WRITE'), (c) => c.json({ name: c.get('account').name }));
    const dev = await f.as('dev');
    const ops = await f.as('ops');
    expect(await f.call('GET', '/vendor/accounts/ops-write/probe-read', undefined, dev)).toMatchObject({ status: 200, json: { name: 'ops-write' } });
    expect((await f.call('POST', '/vendor/accounts/ops-write/probe-write', undefined, dev)).status).toBe(403);
    expect(await f.call('POST', '/vendor/accounts/ops-write/probe-write', undefined, ops)).toMatchObject({ status: 200, json: { name: 'ops-write' } });
    expect((await f.call('POST', '/vendor/accounts/dev-only/probe-write', undefined, dev)).status).toBe(403); // READ alone: nobody writes
    expect((await f.call('POST', '/vendor/accounts/dev-only/probe-write', undefined, await f.as('vendor-admins'))).status).toBe(200);
    expect((await f.call('POST', '/vendor/accounts/open-a/probe-write', undefined, await f.as())).status).toBe(200);
    expect((await f.call('POST', '/vendor/accounts/spaced/probe-write', undefined, await f.as())).status).toBe(200);
    expect((await f.call('GET', '/vendor/accounts/ghost/probe-read', undefined, dev)).status).toBe(404);
    expect((await f.call('GET', '/vendor/accounts/open-a/probe-read', undefined, null)).status).toBe(401);
  });
});

describe('list filtering over many accounts', () => {
  it('pages through exactly the readable accounts across rank chunks', async () => {
    // 700 accounts: the rank index splits them over several chunks. Every third is restricted to `ops`,
    // every fifth of those also to `dev`.
    const accounts: AccountSettings[] = Array.from({ length: 700 }, (_, i) => {
      const name = `acc-${String(i).padStart(4, '0')}`;
      if (i % 3 !== 0) return { name };
      return { name, permissions: [{ READ: i % 5 === 0 ? ['ops', 'dev'] : ['ops'] }] };
    });
    const f = await app(accounts);
    const readable = accounts.filter((_, i) => i % 3 !== 0 || i % 5 === 0).map((a) => a.name);
    const dev = await f.as('dev');
    for (const limit of [1, 37, 100, 500]) {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const { json } = await f.call('GET', `/vendor/accounts?page=${page}&limit=${limit}`, undefined, dev);
        expect(json.total).toBe(readable.length);
        if ((json.items as unknown[]).length === 0) break;
        seen.push(...names(json));
        if (limit === 1 && page >= 3) {
          // Spot-check a deep single-item page rather than walking 500 pages one by one.
          const deep = (await f.call('GET', `/vendor/accounts?page=${readable.length}&limit=1`, undefined, dev)).json;
          expect(names(deep)).toEqual([readable.at(-1)]);
          seen.push(...readable.slice(3));
          break;
        }
      }
      expect(seen, `limit ${limit}`).toEqual(readable);
    }
    const none = (await f.call('GET', '/vendor/accounts?limit=500', undefined, await f.as())).json;
    expect(none.total).toBe(accounts.length - Math.ceil(700 / 3));
    expect(names(none)).toEqual(accounts.filter((_, i) => i % 3 !== 0).map((a) => a.name).slice(0, 500));
  });
});
