import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { interceptedTable, operationOf } from '../../../test/support/intercepted-table.ts';
import { everyOperationItem, everyOperationRequestItem, everyQueueEntryItem, keysOverEveryShard } from '../../../test/support/sharded-items.ts';
import { useTestTables } from '../../../test/support/table.ts';
import { queueEntryOf, type Dispatch } from '../../operations/model.ts';
import type { TableRef } from '../core/client.ts';
import { PK } from '../core/keys.ts';
import { operationKey, operationQueueKey } from './keys.ts';
import { claimOperation, claimWithRequest, compress, createOperation, finishOperation, getOperation, getOperationWithRequest, INLINE_REQUEST_BYTES, openOperations, type NewOperation } from './operations.ts';
import { deleteOldOperationParams, moveOperationParams, moveUnshardedOperations } from './shard-move.ts';

const request = { action: 'scale' as const, targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 };
const dispatch = (agentId: string): Dispatch => ({ agentId, sessionId: `s-${agentId}`, replicaId: 'r1', at: 5 });

/** A request that compresses to more than an operation item keeps: it is stored apart, in a request item of its own. */
const large = (): Uint8Array =>
  compress({ action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' }, data: { blob: randomBytes(INLINE_REQUEST_BYTES).toString('base64') } }], forceConflicts: false });

function input(key: string, over: Partial<NewOperation> = {}): NewOperation {
  return { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: `hash-${key}`, request: compress(request), record: { action: 'scale', objects: 1 }, now: 1_700_000_000_000, ...over };
}

/** Every item of one old partition, read strongly. */
async function oldItems(t: TableRef, pk: string): Promise<Record<string, unknown>[]> {
  const out = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }));
  return out.Items ?? [];
}

/** Rewrites what the operations store wrote as the layout before the shards kept it: one partition each. */
async function toOldLayout(t: TableRef): Promise<void> {
  const kinds: [Record<string, unknown>[], string][] = [
    [await everyOperationItem(t), PK.unshardedOperation],
    [await everyOperationRequestItem(t), PK.unshardedOperationRequest],
    [await everyQueueEntryItem(t), PK.unshardedOperationQueue],
  ];
  for (const [items, pk] of kinds) {
    await Promise.all(
      items.map(async (item) => {
        await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...item, pk } }));
        await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: item.pk, sk: item.sk } }));
      }),
    );
  }
}

async function oldCounts(t: TableRef): Promise<number[]> {
  return Promise.all([PK.unshardedOperationRequest, PK.unshardedOperation, PK.unshardedOperationQueue].map(async (pk) => (await oldItems(t, pk)).length));
}

describe('moving operations of a table written before the shards (docs/table.md#moving-operations-written-before-the-shards)', () => {
  const tables = useTestTables();

  it('puts an operation under its shard key unless the shard holds a later state of it, and deletes only what was copied', () => {
    const id = `c${'0'.repeat(31)}`;
    const open = { pk: 'OPERATION', sk: id, id, state: 'RUNNING', attempt: 2, updatedAt: 7, dispatch: dispatch('a') };
    expect(moveOperationParams('t', open)).toEqual({
      TableName: 't',
      Item: { ...open, ...operationKey(id) },
      ConditionExpression: 'attribute_not_exists(pk) OR (#state IN (:queued, :running) AND (attempt < :a OR (attempt = :a AND attribute_not_exists(dispatch.endedAt))))',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':queued': 'QUEUED', ':running': 'RUNNING', ':a': 2 },
    });
    const ended = { ...open, dispatch: { ...dispatch('a'), endedAt: 9 } };
    expect(moveOperationParams('t', ended).ConditionExpression).toBe('attribute_not_exists(pk) OR (#state IN (:queued, :running) AND attempt <= :a)');
    expect(moveOperationParams('t', { ...open, state: 'SUCCEEDED' }).ConditionExpression).toBe('attribute_not_exists(pk) OR (#state IN (:queued, :running) AND attempt <= :a)');
    expect(deleteOldOperationParams('t', open)).toEqual({
      TableName: 't',
      Key: { pk: 'OPERATION', sk: id },
      ConditionExpression: '#state = :s AND attempt = :a AND updatedAt = :u',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':s': 'RUNNING', ':a': 2, ':u': 7 },
    });
  });

  it('moves every operation, request and queue entry, whole, to its shard, and empties the old partitions; a table already in shards costs three Queries', async () => {
    const t = await tables.fresh();
    const keys = keysOverEveryShard('prod', 'oidc:alice', 30);
    const made = [];
    for (const [i, key] of keys.entries()) {
      // Every third request is stored apart, in a request item.
      const body = i % 3 === 0 ? large() : compress(request);
      made.push((await createOperation(t, input(key, { request: body, now: 1_700_000_000_000 + i, ...(i % 4 === 1 ? { dispatch: dispatch('a') } : {}) }))).record);
    }
    for (const record of made.filter((_, i) => i % 5 === 2)) await finishOperation(t, record.id, { state: 'SUCCEEDED', message: 'done' }, 1_700_000_001_000);
    const before = await Promise.all(made.map((r) => getOperationWithRequest(t, r.id)));
    const queue = await openOperations(t);
    await toOldLayout(t);
    expect(await everyOperationItem(t)).toEqual([]);
    const apart = made.filter((_, i) => i % 3 === 0).length;
    expect(await oldCounts(t)).toEqual([apart, made.length, made.length]);

    expect(await moveUnshardedOperations(t)).toEqual({ requests: apart, operations: made.length, queueEntries: made.length });
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
    expect(await Promise.all(made.map((r) => getOperationWithRequest(t, r.id)))).toEqual(before);
    for (const item of await everyOperationItem(t)) expect(item.pk).toBe(operationKey(item.sk as string).pk);
    expect((await everyOperationRequestItem(t)).length).toBe(apart);
    // Finished operations' entries were in the old queue too (a finish that stopped before its delete): dispatch drops them.
    expect(await openOperations(t)).toEqual(queue);

    let requests = 0;
    const counted = interceptedTable(t, (command, send) => {
      requests++;
      return send(command);
    });
    expect(await moveUnshardedOperations(counted)).toEqual({ requests: 0, operations: 0, queueEntries: 0 });
    expect(requests).toBe(3);
  });

  it('moves each item once when two replicas move at once', async () => {
    const t = await tables.fresh();
    const keys = keysOverEveryShard('prod', 'oidc:alice', 25);
    const made = [];
    for (const [i, key] of keys.entries()) made.push((await createOperation(t, input(key, { request: i % 2 === 0 ? large() : compress(request) }))).record);
    const before = await Promise.all(made.map((r) => getOperationWithRequest(t, r.id)));
    await toOldLayout(t);
    const [a, b] = await Promise.all([moveUnshardedOperations(t), moveUnshardedOperations(t)]);
    // Each old item is deleted by exactly one of them.
    expect(a.operations + b.operations).toBe(made.length);
    expect(a.queueEntries + b.queueEntries).toBe(made.length);
    expect(a.requests + b.requests).toBe(made.length / 2);
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
    expect(await Promise.all(made.map((r) => getOperationWithRequest(t, r.id)))).toEqual(before);
    expect((await openOperations(t)).map((e) => e.id).sort()).toEqual(made.map((r) => r.id).sort());
  });

  it('keeps an operation the shard holds in a later state, and replaces an earlier copy', async () => {
    const t = await tables.fresh();
    const [claimedHere, finishedHere, stale] = await Promise.all(['k1', 'k2', 'k3'].map(async (key) => (await createOperation(t, input(key))).record));
    await toOldLayout(t);
    const old = new Map((await oldItems(t, PK.unshardedOperation)).map((item) => [item.sk, item]));
    // This layout wrote the shard's item of the first two after a copy of their old state: handed out again, finished.
    for (const r of [claimedHere!, finishedHere!]) await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...old.get(r.id), ...operationKey(r.id) } }));
    await claimOperation(t, claimedHere!.id, 0, dispatch('new'), 10);
    await finishOperation(t, finishedHere!.id, { state: 'FAILED', message: 'here' }, 11);
    // The old item of the third moved on after a first copy of it was made.
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...old.get(stale!.id), ...operationKey(stale!.id) } }));
    await t.client.send(
      new UpdateCommand({
        TableName: t.tableName,
        Key: { pk: PK.unshardedOperation, sk: stale!.id },
        UpdateExpression: 'SET #state = :running, attempt = :one, dispatch = :d, updatedAt = :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':running': 'RUNNING', ':one': 1, ':d': dispatch('old'), ':now': 12 },
      }),
    );
    await moveUnshardedOperations(t);
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
    expect(await getOperation(t, claimedHere!.id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'new' } });
    expect(await getOperation(t, finishedHere!.id)).toMatchObject({ state: 'FAILED', message: 'here' });
    expect(await getOperation(t, stale!.id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'old' }, updatedAt: 12 });
  });

  it('copies again an operation written between its copy and its delete, so that write is not lost', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input('busy', { request: large() }));
    await toOldLayout(t);
    let wrote = false;
    const racing = interceptedTable(t, async (command, send) => {
      const out = await send(command);
      if (!wrote && operationOf(command) === 'Put' && command.input.Item?.pk === operationKey(record.id).pk) {
        wrote = true;
        // A replica of the earlier layout, still running, hands the old item out meanwhile.
        await t.client.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: { pk: PK.unshardedOperation, sk: record.id },
            UpdateExpression: 'SET #state = :running, attempt = :one, dispatch = :d, updatedAt = :now ADD handedTo :agent',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':running': 'RUNNING', ':one': 1, ':d': dispatch('old'), ':now': record.createdAt + 1, ':agent': new Set(['old']) },
          }),
        );
      }
      return out;
    });
    expect((await moveUnshardedOperations(racing)).operations).toBe(1);
    expect(wrote).toBe(true);
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
    expect(await getOperation(t, record.id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'old' }, handedTo: ['old'] });
    // Moved with its request, the operation is handed out by this layout as any other.
    const claimed = await claimWithRequest(t, record.id, 1, dispatch('new'), 20);
    expect(claimed?.request).toMatchObject({ action: 'deploy' });
    expect(claimed?.record).toMatchObject({ attempt: 2, handedTo: ['new', 'old'] });
  });

  it('moves a request stored apart with its operation when the operation is moved first', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input('late', { request: large() }));
    await toOldLayout(t);
    // The request's own pass saw nothing yet: an API of the earlier layout wrote it just after.
    const held = (await oldItems(t, PK.unshardedOperationRequest))[0]!;
    await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: held.pk, sk: held.sk } }));
    let restored = false;
    const late = interceptedTable(t, async (command, send) => {
      if (!restored && operationOf(command) === 'Query' && (command.input.ExpressionAttributeValues as Record<string, unknown>)[':pk'] === PK.unshardedOperation) {
        restored = true;
        await t.client.send(new PutCommand({ TableName: t.tableName, Item: held }));
      }
      return send(command);
    });
    expect(await moveUnshardedOperations(late)).toEqual({ requests: 1, operations: 1, queueEntries: 1 });
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
    expect((await getOperationWithRequest(t, record.id))?.request).toMatchObject({ action: 'deploy' });
  });

  it('keeps a queue entry the shard holds, and leaves a lagging one for dispatch to bring in step', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input('q'));
    await toOldLayout(t);
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...operationQueueKey(record.id), ...queueEntryOf({ ...record, state: 'RUNNING', attempt: 3 }) } }));
    await moveUnshardedOperations(t);
    expect(await openOperations(t)).toEqual([expect.objectContaining({ id: record.id, state: 'RUNNING', attempt: 3 })]);
    expect(await oldCounts(t)).toEqual([0, 0, 0]);
  });
});
