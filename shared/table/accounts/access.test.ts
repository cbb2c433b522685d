import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { putAgentStaticAccounts, removeAgentStaticAccounts } from '../sources/agent-static.ts';
import { syncSource } from '../sources/sync.ts';
import { deleteAccessParams, ensureAccessIndex, putAccessParams, readAccessIndex, rebuildAccessIndex } from './access.ts';
import { ACCESS_BUILT_KEY, accessKey } from './keys.ts';

const file = { id: 'driver-config', kind: 'driver-config' as const };

describe('access index builders', () => {
  it('writes only forward in account version', () => {
    expect(putAccessParams('t', 'prod', ['dev'], 4)).toEqual({
      TableName: 't',
      Item: { pk: 'ACCESS', sk: 'prod', read: ['dev'], v: 4 },
      ConditionExpression: 'attribute_not_exists(pk) OR #v <= :v',
      ExpressionAttributeNames: { '#v': 'v' },
      ExpressionAttributeValues: { ':v': 4 },
    });
    expect(deleteAccessParams('t', 'prod', 4)).toMatchObject({ Key: { pk: 'ACCESS', sk: 'prod' }, ConditionExpression: 'attribute_not_exists(pk) OR #v <= :v' });
    expect(deleteAccessParams('t', 'prod')).toEqual({ TableName: 't', Key: { pk: 'ACCESS', sk: 'prod' } });
  });
});

describe('access index against dynalite', () => {
  const tables = useTestTables();

  it('follows every definition change of a source sync', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'a', permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }] }, { name: 'b' }, { name: 'c', permissions: [{ READ: ['x y'] }] }], 1);
    expect(await readAccessIndex(t)).toEqual(new Map([['a', ['dev', 'ops']]]));
    // Roles change; b becomes restricted; a role with whitespace opens c (docs/agent-config.md#permissions).
    await syncSource(t, file, [{ name: 'a', permissions: [{ READ: ['qa'] }] }, { name: 'b', permissions: [{ WRITE: ['ops'] }] }, { name: 'c' }], 2);
    expect(await readAccessIndex(t)).toEqual(new Map([['a', ['qa']], ['b', ['ops']]]));
    // Opened by dropping its permissions; removed with its account.
    await syncSource(t, file, [{ name: 'a' }], 3);
    expect(await readAccessIndex(t)).toEqual(new Map());
  });

  it('follows the winning definition when another source joins or leaves', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'shared', permissions: [{ READ: ['dev'] }] }], 1);
    await putAgentStaticAccounts(t, 'agent-1', 'z', [{ name: 'shared' }, { name: 'edge', permissions: [{ READ: ['edge'] }] }], 2);
    expect(await readAccessIndex(t)).toEqual(new Map([['edge', ['edge']]]));
    await removeAgentStaticAccounts(t, 'agent-1', 3);
    expect(await readAccessIndex(t)).toEqual(new Map([['shared', ['dev']]]));
  });

  it('never lets an older account version overwrite a newer entry', async () => {
    const t = await tables.fresh();
    await t.client.send(new PutCommand(putAccessParams(t.tableName, 'a', ['new'], 5)));
    await expect(t.client.send(new PutCommand(putAccessParams(t.tableName, 'a', ['old'], 4)))).rejects.toThrow(/conditional/i);
    await expect(t.client.send(new DeleteCommand(deleteAccessParams(t.tableName, 'a', 4)))).rejects.toThrow(/conditional/i);
    expect(await readAccessIndex(t)).toEqual(new Map([['a', ['new']]]));
  });

  it('is rebuilt from the accounts once, when it was never built', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'a', permissions: [{ READ: ['dev'] }] }, { name: 'b', permissions: [{ READ: ['ops'] }] }, { name: 'c' }], 1);
    // Data from before the index: an entry missing, a stray one for an open account.
    await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: accessKey('b') }));
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...accessKey('c'), read: ['stale'], v: 1 } }));
    expect(await ensureAccessIndex(t)).toBe(true);
    expect(await readAccessIndex(t)).toEqual(new Map([['a', ['dev']], ['b', ['ops']]]));
    await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: accessKey('a') }));
    expect(await ensureAccessIndex(t)).toBe(false); // built: one read, no rebuild
    expect(await readAccessIndex(t)).toEqual(new Map([['b', ['ops']]]));
    expect(await rebuildAccessIndex(t)).toEqual({ restricted: 2 });
    expect((await readAccessIndex(t)).has(ACCESS_BUILT_KEY.sk)).toBe(false);
  });
});
