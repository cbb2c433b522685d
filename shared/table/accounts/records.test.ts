import { describe, expect, it } from 'vitest';
import { faultyTable } from '../../../test/support/store-faults.ts';
import { useTestTables } from '../../../test/support/table.ts';
import type { Definition } from '../../accounts/model.ts';
import { allAccounts, createAccount, getAccount, getAccounts, mutateAccount, queryAccountsParams, readAccountsAfter, setDefinition, updateAccount, updateAccountParams } from './records.ts';
import { ACCOUNT_PARTITIONS, accountKey } from './keys.ts';
import { queryAccountRangeParams } from './listing.ts';
import { accountNamesParams } from './rank.ts';
import { skewedNames } from '../../../test/support/sharded-items.ts';
import { ACCOUNT_SHARDS } from '../core/keys.ts';

const def: Definition = { kind: 'driver-config', settings: { context: 'c' }, at: 1 };

describe('account builders', () => {
  it('reads a page in name order as one Query per shard after the name before it, each asked for its share', () => {
    const queries = queryAccountsParams('t', 100, 'acct-07', true);
    expect(queries).toEqual(
      ACCOUNT_PARTITIONS.map((pk) => ({
        TableName: 't',
        KeyConditionExpression: 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: { ':pk': pk, ':after': 'acct-07' },
        Limit: 23,
        ConsistentRead: true,
      })),
    );
    expect(queryAccountsParams('t', 5)[3]).toEqual({ TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'ACCOUNT#3' }, Limit: 5 });
    expect(queryAccountRangeParams('t', 'a', 'b', ['ACCOUNT#2'])).toEqual([
      { TableName: 't', KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last', ExpressionAttributeValues: { ':pk': 'ACCOUNT#2', ':first': 'a', ':last': 'b' } },
    ]);
    expect(queryAccountRangeParams('t', 'a', 'b')).toHaveLength(ACCOUNT_SHARDS);
    expect(accountNamesParams('t', 1).map((q) => [q.ExpressionAttributeValues?.[':pk'], q.ProjectionExpression, q.Limit])).toEqual(ACCOUNT_PARTITIONS.map((pk) => [pk, 'sk', 1]));
  });

  it('conditions the generic update on the version and raises it', () => {
    const p = updateAccountParams('t', 'prod', 7, { state: 'FAILED', lastAssignmentMsg: null, cachingEpoch: 3 }, 100);
    expect(p.ConditionExpression).toBe('version = :expected');
    expect(p.UpdateExpression).toBe(
      'SET version = version + :one, updatedAt = :now, #state = :state, #cachingEpoch = :cachingEpoch REMOVE #lastAssignmentMsg',
    );
    expect(p.ExpressionAttributeValues).toMatchObject({ ':expected': 7, ':state': 'FAILED', ':cachingEpoch': 3 });
  });

  it('stores the writer\'s id with the update when given', () => {
    const p = updateAccountParams('t', 'prod', 7, { state: 'ACTIVE' }, 100, 'w-1');
    expect(p.UpdateExpression).toContain('lastWriteId = :writeId');
    expect(p.ExpressionAttributeValues).toMatchObject({ ':writeId': 'w-1' });
    expect(updateAccountParams('t', 'prod', 7, { state: 'ACTIVE' }, 100).UpdateExpression).not.toContain('lastWriteId');
  });

  it('keys per-agent results by agentId, so setting and removing them are map paths', () => {
    const p = updateAccountParams('t', 'prod', 1, {
      setAgents: [{ agentId: 'a-1', caching: true, ok: true, at: 5 }],
      removeAgents: ['a-2'],
    }, 100);
    expect(p.UpdateExpression).toContain('agents.#sa0 = :sa0');
    expect(p.UpdateExpression).toContain('REMOVE agents.#ra0');
    expect(p.ExpressionAttributeNames).toEqual({ '#sa0': 'a-1', '#ra0': 'a-2' });
  });
});

describe('accounts against dynalite', () => {
  const tables = useTestTables();

  it('creates once, sets definitions and raises the version on each write', async () => {
    const t = await tables.fresh();
    expect(await createAccount(t, 'prod', 1)).toBe(true);
    expect(await createAccount(t, 'prod', 2)).toBe(false);
    const after = await setDefinition(t, 'prod', 'driver-config', def, 3);
    expect(after).toMatchObject({ name: 'prod', version: 2, defs: { 'driver-config': def } });
    expect(await setDefinition(t, 'missing', 'driver-config', def, 3)).toBeUndefined();
  });

  it('refuses an update from a stale version with precondition_failed', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const updated = await updateAccount(t, 'prod', 1, { state: 'INACTIVE', generation: 1 }, 2);
    expect(updated).toMatchObject({ version: 2, state: 'INACTIVE', generation: 1 });
    await expect(updateAccount(t, 'prod', 1, { state: 'ACTIVE' }, 3)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect((await getAccount(t, 'prod'))?.state).toBe('INACTIVE');
  });

  it('mutateAccount re-reads and retries when it loses a race', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    let calls = 0;
    const { record } = await mutateAccount(
      t,
      'prod',
      async (r) => {
        calls++;
        // Another writer changes the item between the first read and its write.
        if (calls === 1) await updateAccount(t, 'prod', r?.version ?? 0, { lastAssignmentMsg: 'other' }, 2);
        return { generation: (r?.generation ?? 0) + 1 };
      },
      () => 5,
    );
    expect(calls).toBe(2);
    expect(record).toMatchObject({ lastAssignmentMsg: 'other', generation: 1, version: 3 });
  });

  it('mutateAccount counts its own write as done when the SDK sent it twice (the first answer lost)', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const { table, faults } = await faultyTable(t);
    try {
      faults.set({ kind: 'lost-answer' }, { only: ['UpdateItem'], times: 1 });
      let calls = 0;
      const result = await mutateAccount(
        table,
        'prod',
        (r) => {
          calls++;
          // Refuses what is already done, as activation does for an ACTIVE account.
          if (r?.state === 'ACTIVE') throw new Error('already active');
          return { state: 'ACTIVE', generation: (r?.generation ?? 0) + 1 };
        },
        () => 5,
      );
      expect(faults.injected()).toEqual({ 'lost-answer': 1 });
      expect(calls).toBe(1);
      expect(result).toMatchObject({ changed: true, record: { state: 'ACTIVE', generation: 1, version: 2 } });
    } finally {
      await faults.close();
    }
  });

  it('writes agent answers as the account version allows and drops one decided on a stale read', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const answer = { agentId: 'a1', caching: true, ok: true, at: 2 };
    const written = await updateAccount(t, 'prod', 1, { setAgents: [answer] }, 2);
    expect(written.agents).toEqual({ a1: answer });
    await expect(updateAccount(t, 'prod', 1, { setAgents: [{ ...answer, agentId: 'a2' }] }, 3)).rejects.toMatchObject({ code: 'precondition_failed' });
    await expect(updateAccount(t, 'gone', 1, { setAgents: [answer] }, 4)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect((await getAccount(t, 'prod'))?.agents).toEqual({ a1: answer });
  });

  it('reads many accounts, and every account a page at a time in name order', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 25 }, (_, i) => `acc-${String(i).padStart(2, '0')}`);
    for (const name of [...names].reverse()) await createAccount(t, name, 1);
    expect([...(await getAccounts(t, [...names, 'nope'])).keys()].sort()).toEqual(names);
    const pages: string[][] = [];
    for await (const page of allAccounts(t, 10)) pages.push(page.map((r) => r.name));
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat()).toEqual(names);
  });

  it('reads pages after a name from every shard, merged in name order, and paging on reads every account once', async () => {
    const t = await tables.fresh();
    // Most in one shard, a few in each other: that shard's pages are cut long before the others'.
    const names = skewedNames('p-', 80, 3);
    expect(new Set(names.map((name) => accountKey(name).pk)).size).toBe(ACCOUNT_SHARDS);
    await Promise.all(names.map((name) => createAccount(t, name, 1)));
    // At 40 each shard is asked for 12 (its share and half again).
    for (const limit of [1, 3, 8, 40, names.length, names.length + 1]) {
      const read: string[] = [];
      let after: string | undefined;
      for (let rounds = 0; ; rounds++) {
        expect(rounds).toBeLessThanOrEqual(names.length);
        const page = await readAccountsAfter(t, limit, after);
        expect(page.records.length).toBeLessThanOrEqual(limit);
        read.push(...page.records.map((r) => r.name));
        if (!page.more) break;
        after = page.records.at(-1)?.name;
      }
      expect(read, `limit ${limit}`).toEqual(names);
      const pages: string[][] = [];
      for await (const page of allAccounts(t, limit)) pages.push(page.map((r) => r.name));
      expect(pages.flat(), `limit ${limit}`).toEqual(names);
    }
    // From the middle: only the names after it.
    expect((await readAccountsAfter(t, 5, names[20])).records.map((r) => r.name)).toEqual(names.slice(21, 26));
  });
});
