import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import { activationBatchSchema, registrationBatchSchema } from '../../shared/accounts/schema.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { isAccountPartition } from '../../shared/table/accounts/keys.ts';
import { changesSince, cursorAt } from '../../shared/table/accounts/feed.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { putSession } from '../../shared/table/agents/sessions.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth, apiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import { createApp } from '../app.ts';
import { interceptedTable } from '../../test/support/intercepted-table.ts';

const tables = useTestTables();

const names = (n: number) => Array.from({ length: n }, (_, i) => `acct-${String(i).padStart(4, '0')}`);

async function feedNames(t: TableRef): Promise<string[]> {
  const out: string[] = [];
  let cursor = cursorAt(0);
  for (;;) {
    const page = await changesSince(t, cursor, 100);
    out.push(...page.changes.map((c) => c.name));
    if (page.changes.length < 100) return out.sort();
    cursor = page.cursor;
  }
}

/**
 * The table as the API sees it, with a hook before each account write (an UpdateItem of an
 * account item) that may hold it back; the hook gets the account name.
 */
function hookedTable(t: TableRef, before: (account: string) => Promise<void>): TableRef {
  return interceptedTable(t, async (command, send) => {
    if (command instanceof UpdateCommand && isAccountPartition(command.input.Key?.['pk'])) await before(String(command.input.Key?.['sk']));
    return send(command);
  });
}

async function registered(count: number) {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  const all = names(count);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, all.map((name) => ({ name })), clock.now());
  await putSession(table, { agentId: 'agent-1', zoneId: 'z1', replicaId: 'r1', connectedAt: clock.now(), leaseExpiresAt: clock.now() + 60_000, agentVersion: '1', staticAccounts: [] });
  return { table, clock, all };
}

async function patch(app: ReturnType<typeof createApp>, body: unknown): Promise<Response> {
  return await app.request('/vendor/accounts', { method: 'PATCH', body: JSON.stringify(body), headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
}

describe('batches of up to 1,000 records', () => {
  it('the batch schemas take 1,000 records and refuse 1,001', () => {
    const records = (n: number) => names(n).map((name) => ({ name, state: 'ACTIVE' }));
    expect(v.safeParse(activationBatchSchema, records(1000)).success).toBe(true);
    expect(v.safeParse(registrationBatchSchema, names(1000).map((name) => ({ name }))).success).toBe(true);
    const over = v.safeParse(activationBatchSchema, records(1001));
    expect(over.success).toBe(false);
    expect(over.issues?.[0]?.message).toBe('must hold at most 1000 records');
  });

  it('a body of 1,000 records of the largest valid size passes the default body limit', async () => {
    const f = await apiFixture(tables, []);
    const big = Array.from({ length: 1000 }, (_, i) => ({
      name: `${'n'.repeat(248)}${String(i).padStart(5, '0')}`,
      zoneId: 'z'.repeat(253),
      kubeconfigFile: `/${'k'.repeat(4095)}`,
      state: 'ACTIVE',
    }));
    expect(JSON.stringify(big).length).toBeGreaterThan(4 * 1024 * 1024);
    const res = await f.call('PATCH', '/vendor/accounts', big);
    // Past the body limit and the schema: refused only because no source defines those names.
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('unknown_account');
    expect(await feedNames(f.table)).toEqual([]);
  });
});

describe('PATCH queues the driver work as the batch is written', () => {
  it('the first 25 accounts written are in the feed while the rest of the batch is still being written', async () => {
    const { table, clock, all } = await registered(60);
    const app = createApp({ table, clock, auth: adminTokenAuth() });
    expect((await app.request('/vendor/accounts', { method: 'POST', body: JSON.stringify(all.map((name) => ({ name }))), headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).status).toBe(200);

    let writes = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const hooked = createApp({ table: hookedTable(table, () => (++writes > 25 ? gate : Promise.resolve())), clock, auth: adminTokenAuth() });
    let answered = false;
    const response = patch(hooked, all.map((name) => ({ name, state: 'ACTIVE' }))).then((res) => {
      answered = true;
      return res;
    });
    // 25 accounts written, the 26th held back: their 25 entries are appended without waiting for it.
    await vi.waitFor(async () => expect(await feedNames(table)).toEqual(all.slice(0, 25)), { timeout: 20_000 });
    expect(answered).toBe(false);
    expect((await getAccount(table, all[25]!))?.state).toBe('INACTIVE');

    open();
    expect((await response).status).toBe(200);
    expect(await feedNames(table)).toEqual(all);
  });

  it('stamps each feed entry when its account is written, not when the request began, so a replica reading behind its newest entry finds it', async () => {
    const { table, clock, all } = await registered(60);
    const app = createApp({ table, clock, auth: adminTokenAuth() });
    await app.request('/vendor/accounts', { method: 'POST', body: JSON.stringify(all.map((name) => ({ name }))), headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const began = clock.now();
    // A long batch: a second passes before each account write, 60 s in all (the replicas re-read 5 s).
    const hooked = createApp({ table: hookedTable(table, () => clock.advance(1_000)), clock, auth: adminTokenAuth() });
    expect((await patch(hooked, all.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
    const { changes } = await changesSince(table, cursorAt(0), 100);
    expect(changes).toHaveLength(60);
    for (const c of changes) expect(c.at).toBeGreaterThanOrEqual((await getAccount(table, c.name))!.updatedAt);
    expect(Math.max(...changes.map((c) => c.at)) - began).toBeGreaterThanOrEqual(59_000);
  });

  it('when one account fails its write, the accounts written before it still get their entries', async () => {
    const { table, clock, all } = await registered(30);
    const app = createApp({ table, clock, auth: adminTokenAuth() });
    await app.request('/vendor/accounts', { method: 'POST', body: JSON.stringify(all.map((name) => ({ name }))), headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const victim = all[29]!;
    // Another writer activates the last account between the batch's checks and its write.
    const hooked = createApp({
      table: hookedTable(table, async (account) => {
        if (account !== victim) return;
        const current = await getAccount(table, victim, { consistent: true });
        await updateAccount(table, victim, current!.version, { state: 'ACTIVE', generation: current!.generation + 1 }, clock.now());
      }),
      clock,
      auth: adminTokenAuth(),
    });
    const res = await patch(hooked, all.map((name) => ({ name, state: 'ACTIVE' })));
    expect(res.status).toBe(409);
    expect(await feedNames(table)).toEqual(all.slice(0, 29));
  });
});
