import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { interceptedTable, operationOf } from '../../../test/support/intercepted-table.ts';
import { everyAccountItem } from '../../../test/support/sharded-items.ts';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import { PK } from '../core/keys.ts';
import { accountKey } from './keys.ts';
import { getAccount, newAccountRecord } from './records.ts';
import { deleteUnshardedParams, moveToShardParams, moveUnshardedAccounts } from './shard-move.ts';

/** An account item as the layout before the shards wrote it: every one in the `ACCOUNT` partition. */
async function putUnsharded(t: TableRef, name: string, version = 1, extra: Record<string, unknown> = {}): Promise<void> {
  const record = { ...newAccountRecord(name, 5), version, state: 'ACTIVE', registration: { zoneId: 'z', at: 4 }, ...extra };
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: PK.unshardedAccount, sk: name, ...record } }));
}

async function unshardedNames(t: TableRef): Promise<string[]> {
  const out = await t.client.send(
    new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.unshardedAccount }, ConsistentRead: true }),
  );
  return (out.Items ?? []).map((item) => item.sk as string);
}

describe('moving account items of a table written before the shards (docs/table.md#moving-a-table-written-before-the-shards)', () => {
  const tables = useTestTables();

  it('puts under the shard key unless the shard holds the same or a later version, and deletes only what was copied', () => {
    const item = { pk: PK.unshardedAccount, sk: 'prod', name: 'prod', version: 3 };
    expect(moveToShardParams('t', item)).toEqual({
      TableName: 't',
      Item: { ...item, ...accountKey('prod') },
      ConditionExpression: 'attribute_not_exists(pk) OR version < :v',
      ExpressionAttributeValues: { ':v': 3 },
    });
    expect(deleteUnshardedParams('t', item)).toEqual({
      TableName: 't',
      Key: { pk: 'ACCOUNT', sk: 'prod' },
      ConditionExpression: 'version = :v',
      ExpressionAttributeValues: { ':v': 3 },
    });
  });

  it('moves every item, whole, to its shard and empties the old partition; a table already in shards costs one Query', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 230 }, (_, i) => `old-${String(i).padStart(3, '0')}`);
    for (const [i, name] of names.entries()) await putUnsharded(t, name, 1 + (i % 4), { lastAssignmentMsg: `m${i}` });
    expect(await moveUnshardedAccounts(t)).toBe(names.length);
    expect(await unshardedNames(t)).toEqual([]);
    const items = await everyAccountItem(t);
    expect(items.map((item) => item.sk)).toEqual(names);
    for (const item of items) expect(item.pk).toBe(accountKey(item.sk as string).pk);
    expect(await getAccount(t, 'old-007')).toEqual({ ...newAccountRecord('old-007', 5), version: 4, state: 'ACTIVE', registration: { zoneId: 'z', at: 4 }, lastAssignmentMsg: 'm7' });

    let requests = 0;
    const counted = interceptedTable(t, (command, send) => {
      requests++;
      return send(command);
    });
    expect(await moveUnshardedAccounts(counted)).toBe(0);
    expect(requests).toBe(1);
  });

  it('moves each item once when two replicas move at once', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 150 }, (_, i) => `both-${String(i).padStart(3, '0')}`);
    for (const name of names) await putUnsharded(t, name, 2);
    const [a, b] = await Promise.all([moveUnshardedAccounts(t), moveUnshardedAccounts(t)]);
    // Each old item is deleted by exactly one of them.
    expect((a as number) + (b as number)).toBe(names.length);
    expect(await unshardedNames(t)).toEqual([]);
    const items = await everyAccountItem(t);
    expect(items.map((item) => item.sk)).toEqual(names);
    expect(items.every((item) => item.version === 2 && item.state === 'ACTIVE')).toBe(true);
  });

  it('keeps a later item the shard already holds, and replaces an earlier copy', async () => {
    const t = await tables.fresh();
    await putUnsharded(t, 'kept', 3);
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...accountKey('kept'), ...newAccountRecord('kept', 9), version: 7 } }));
    await putUnsharded(t, 'replaced', 5);
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...accountKey('replaced'), ...newAccountRecord('replaced', 9), version: 4 } }));
    await moveUnshardedAccounts(t);
    expect(await unshardedNames(t)).toEqual([]);
    expect(await getAccount(t, 'kept')).toMatchObject({ version: 7, updatedAt: 9 });
    expect(await getAccount(t, 'replaced')).toMatchObject({ version: 5, state: 'ACTIVE' });
  });

  it('copies again an old item written between its copy and its delete, so that write is not lost', async () => {
    const t = await tables.fresh();
    await putUnsharded(t, 'busy', 1);
    let wrote = false;
    const racing = interceptedTable(t, async (command, send) => {
      const out = await send(command);
      if (!wrote && operationOf(command) === 'Put' && command.input.Item?.sk === 'busy') {
        wrote = true;
        // A replica of the earlier layout, still running, changes the old item.
        await t.client.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: { pk: PK.unshardedAccount, sk: 'busy' },
            UpdateExpression: 'SET version = version + :one, lastAssignmentMsg = :m',
            ExpressionAttributeValues: { ':one': 1, ':m': 'late' },
          }),
        );
      }
      return out;
    });
    expect(await moveUnshardedAccounts(racing)).toBe(1);
    expect(wrote).toBe(true);
    expect(await unshardedNames(t)).toEqual([]);
    expect(await getAccount(t, 'busy')).toMatchObject({ version: 2, lastAssignmentMsg: 'late' });
  });
});
