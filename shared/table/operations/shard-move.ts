import { DeleteCommand, GetCommand, PutCommand, type DeleteCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { isFinished, type OperationState } from '../../operations/model.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK } from '../core/keys.ts';
import { drainPartition } from '../core/partition-drain.ts';
import { operationKey, operationQueueKey, operationRequestKey } from './keys.ts';

/**
 * A table written before the operations were spread over shards holds them in `OPERATION`,
 * `OPREQUEST` and `OPQUEUE`. A driver replica moves them to their shards at start, before it serves
 * (docs/table.md#moving-operations-written-before-the-shards), in that order: the large requests, the
 * operations, the queue entries, so that a replica of this layout never finds an entry whose operation
 * is not there yet, nor claims an operation whose request is still behind. Each item is put under its
 * shard's key, then deleted from the old partition; replicas that start together move each item once:
 *
 * - a large request never changes: the put holds when the shard has none of that key, and the delete
 *   is plain;
 * - an operation only moves forward (handed out again: a higher `attempt`; its hand-out ended:
 *   `dispatch.endedAt`; finished), so the put holds when the shard has none of that id or an earlier
 *   state of it (another replica's copy, made before the old item changed), and never over a finished
 *   one or one handed out further (by this layout); the delete holds only while the old item is still
 *   what was copied (its `state`, `attempt` and `updatedAt`), else the next round copies it again.
 *   One whose request is stored apart has that request moved first;
 * - a queue entry is a copy of its operation that dispatch brings in step (docs/table.md#operations):
 *   the put holds when the shard has no entry of that id (one there is this layout's, or as recent),
 *   and the delete is plain. An entry that lags after the move is brought in step by the claim or the
 *   pass that finds it, as any lagging entry is.
 */

type Item = Record<string, unknown>;

/** The old key of a large request: `OPREQUEST` / `<id>#<requestHash>`. */
function oldRequestKey(id: string, requestHash: string): { pk: string; sk: string } {
  return { pk: PK.unshardedOperationRequest, sk: `${id}#${requestHash}` };
}

/** A large request under its shard's key, unless the shard holds it already (the same id and hash carry the same request). */
export function moveRequestParams(tableName: string, item: Item): PutCommandInput {
  const sk = String(item.sk);
  const cut = sk.indexOf('#');
  const [id, requestHash] = cut < 0 ? [sk, ''] : [sk.slice(0, cut), sk.slice(cut + 1)];
  return { TableName: tableName, Item: { ...item, ...operationRequestKey(id, requestHash) }, ConditionExpression: 'attribute_not_exists(pk)' };
}

/**
 * The old operation item under its shard's key, unless the shard holds the operation finished, handed
 * out further, or at the same hand-out already ended while this copy's is not: a state this copy
 * comes before. A copy of the same state replaces it (it is the same, but for an ended hand-out's
 * reason written again).
 */
export function moveOperationParams(tableName: string, item: Item): PutCommandInput {
  const finished = isFinished(item.state as OperationState);
  const ended = (item.dispatch as { endedAt?: unknown } | undefined)?.endedAt !== undefined;
  const notBefore = finished || ended ? 'attempt <= :a' : '(attempt < :a OR (attempt = :a AND attribute_not_exists(dispatch.endedAt)))';
  return {
    TableName: tableName,
    Item: { ...item, ...operationKey(String(item.sk)) },
    ConditionExpression: `attribute_not_exists(pk) OR (#state IN (:queued, :running) AND ${notBefore})`,
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':queued': 'QUEUED', ':running': 'RUNNING', ':a': item.attempt },
  };
}

/** The old operation item's delete, while it is still what was copied: every write of it changes one of these three. */
export function deleteOldOperationParams(tableName: string, item: Item): DeleteCommandInput {
  const updated = typeof item.updatedAt === 'number';
  return {
    TableName: tableName,
    Key: { pk: PK.unshardedOperation, sk: item.sk },
    ConditionExpression: `#state = :s AND attempt = :a AND ${updated ? 'updatedAt = :u' : 'attribute_not_exists(updatedAt)'}`,
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':s': item.state, ':a': item.attempt, ...(updated ? { ':u': item.updatedAt } : {}) },
  };
}

/** A queue entry under its shard's key, unless the shard holds an entry of that operation already. */
export function moveQueueEntryParams(tableName: string, item: Item): PutCommandInput {
  return { TableName: tableName, Item: { ...item, ...operationQueueKey(String(item.sk)) }, ConditionExpression: 'attribute_not_exists(pk)' };
}

/** Copies an item that never changes (a large request), then deletes it from the old partition; true when this call deleted it. */
async function moveRequest(t: TableRef, item: Item): Promise<boolean> {
  await tryConditional(() => t.client.send(new PutCommand(moveRequestParams(t.tableName, item))));
  return tryConditional(() => t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'attribute_exists(pk)' })));
}

async function moveOperation(t: TableRef, item: Item, moved: MovedOperations): Promise<boolean> {
  // A request stored apart goes first: a replica of this layout may claim the operation as soon as it is moved.
  if (item.request === undefined && typeof item.requestHash === 'string') {
    const out = await t.client.send(new GetCommand({ TableName: t.tableName, Key: oldRequestKey(String(item.sk), item.requestHash), ConsistentRead: true }));
    if (out.Item !== undefined && (await moveRequest(t, out.Item))) moved.requests++;
  }
  await tryConditional(() => t.client.send(new PutCommand(moveOperationParams(t.tableName, item))));
  return tryConditional(() => t.client.send(new DeleteCommand(deleteOldOperationParams(t.tableName, item))));
}

async function moveQueueEntry(t: TableRef, item: Item): Promise<boolean> {
  await tryConditional(() => t.client.send(new PutCommand(moveQueueEntryParams(t.tableName, item))));
  return tryConditional(() => t.client.send(new DeleteCommand({ TableName: t.tableName, Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'attribute_exists(pk)' })));
}

/** How many items of each kind this replica moved (deleted from the old partitions). */
export interface MovedOperations {
  requests: number;
  operations: number;
  queueEntries: number;
}

/**
 * Moves every item of the three old partitions to its shard, requests first, then operations, then
 * queue entries; on a table written in shards it costs three Queries of empty partitions.
 */
export async function moveUnshardedOperations(t: TableRef): Promise<MovedOperations> {
  const moved: MovedOperations = { requests: 0, operations: 0, queueEntries: 0 };
  moved.requests += await drainPartition(t, PK.unshardedOperationRequest, (item) => moveRequest(t, item));
  moved.operations = await drainPartition(t, PK.unshardedOperation, (item) => moveOperation(t, item, moved));
  moved.queueEntries = await drainPartition(t, PK.unshardedOperationQueue, (item) => moveQueueEntry(t, item));
  return moved;
}
