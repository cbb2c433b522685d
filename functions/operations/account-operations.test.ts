import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { finishOperation } from '../../shared/table/operations/operations.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { adminTokenAuth, TEST_ADMIN_TOKEN } from '../../test/support/api.ts';
import { oidcConfig } from '../../test/support/oidc.ts';
import { appClient, useRoleIssuer } from '../../test/support/role-callers.ts';
import { createApiAuth } from '../auth/authenticator.ts';
import type { ApiAuth } from '../auth/authenticator.ts';
import { createApp } from '../app.ts';

const tables = useTestTables();

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop' },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
});

async function fixture(auth: ApiAuth = adminTokenAuth()) {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  await putAgentStaticAccounts(table, 'agent-1', 'agents_ns', [{ name: 'prod' }, { name: 'other' }, { name: 'guarded', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] }], clock.now());
  const { send, as } = appClient(createApp({ table, clock, auth }));
  return {
    table,
    clock,
    submit: async (account: string, key: string) => {
      const res = await send('POST', `/vendor/accounts/${account}/operations`, { action: 'deploy', manifests: [deployment(key)] }, { 'Idempotency-Key': key });
      expect(res.status).toBe(202);
      await clock.advance(1000);
      return res.json.id as string;
    },
    list: (account: string, query = '') => send('GET', `/vendor/accounts/${account}/operations${query}`),
    as,
  };
}

const ids = (page: { json: Record<string, unknown> }) => (page.json.items as { id: string }[]).map((o) => o.id);

describe('GET /vendor/accounts/{accountId}/operations', () => {
  it("lists only the account's operations, newest first, a page at a time by `next`", async () => {
    const f = await fixture();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await f.submit('prod', `k${i}`));
    await f.submit('other', 'elsewhere');
    // A retry of the first request, later, answers the same operation and leaves it where it was.
    expect(await f.submit('prod', 'k0')).toBe(made[0]);
    const newestFirst = [...made].reverse();
    const all = await f.list('prod');
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(newestFirst);
    expect(all.json.next).toBeUndefined();
    const first = await f.list('prod', '?limit=2');
    expect(ids(first)).toEqual(newestFirst.slice(0, 2));
    const second = await f.list('prod', `?limit=2&after=${first.json.next as string}`);
    expect(ids(second)).toEqual(newestFirst.slice(2, 4));
    const third = await f.list('prod', `?limit=2&after=${second.json.next as string}`);
    expect(ids(third)).toEqual(newestFirst.slice(4));
    expect(third.json.next).toBeUndefined();
  });

  it('filters by state, one or several', async () => {
    const f = await fixture();
    const a = await f.submit('prod', 'a');
    const b = await f.submit('prod', 'b');
    const c = await f.submit('prod', 'c');
    await finishOperation(f.table, b, { state: 'SUCCEEDED', message: 'done' }, f.clock.now());
    await finishOperation(f.table, c, { state: 'FAILED', message: 'no' }, f.clock.now());
    expect(ids(await f.list('prod', '?state=QUEUED'))).toEqual([a]);
    expect(ids(await f.list('prod', '?state=SUCCEEDED,FAILED'))).toEqual([c, b]);
    expect(ids(await f.list('prod', '?state=TIMED_OUT'))).toEqual([]);
  });

  it('answers bad filters with a 400 problem naming the parameter, before reading the account', async () => {
    const f = await fixture();
    for (const [query, path] of [
      ['?state=DONE', 'state'],
      ['?state=', 'state'],
      ['?state=QUEUED,,', 'state'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?after=abc', 'after'],
      ['?after=' + Buffer.from('0000000000001#zz').toString('base64url'), 'after'],
      ['?cursor=x', 'cursor'],
      ['?state=QUEUED&state=FAILED', 'state'],
    ] as const) {
      for (const account of ['prod', 'no-such-account']) {
        const res = await f.list(account, query);
        expect(res.status, query).toBe(400);
        expect(res.type).toContain('application/problem+json');
        expect((res.json.errors as { path: string }[]).map((e) => e.path)).toEqual([path]);
      }
    }
    expect((await f.list('no-such-account')).status).toBe(404);
  });
});

describe("who may list an account's operations", () => {
  const roles = useRoleIssuer();

  it("needs one of the account's READ or WRITE roles", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const f = await fixture(createApiAuth({ oidc: oidcConfig(roles.issuer()), adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: false, clock }));
    roles.issuer().now = () => Math.floor(clock.now() / 1000);
    const id = await f.submit('guarded', 'one');
    f.as(await roles.token('nobody', 'someone-else'));
    const refused = await f.list('guarded');
    expect(refused.status).toBe(403);
    expect(refused.json.items).toBeUndefined();
    f.as(await roles.token('reader', 'dev'));
    expect(ids(await f.list('guarded'))).toEqual([id]);
    f.as(await roles.token('writer', 'ops'));
    expect(ids(await f.list('guarded'))).toEqual([id]);
  });
});
