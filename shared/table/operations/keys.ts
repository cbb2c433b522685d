import { OPERATION_QUEUE_SHARDS, OPERATION_SHARDS, PK_PREFIX, partitionTest, shardPartitions, type Key } from '../core/keys.ts';
import { padMs } from '../accounts/keys.ts';

/**
 * The shard of an operation id: its first hex digit modulo `OPERATION_SHARDS`. The id is already a
 * hash (SHA-256), so its digits are evenly spread, and every reader or writer that holds the id knows
 * the partition without a read. Stable for ever: an item is found only under the shard its id names.
 * A string that is not an id (never stored) gets shard 0, where nothing has its key.
 */
export function operationShard(id: string): number {
  const digit = Number.parseInt(id.charAt(0), 16);
  return Number.isNaN(digit) ? 0 : digit % OPERATION_SHARDS;
}

/** The partitions of the operation items, one per shard. */
export const OPERATION_PARTITIONS = shardPartitions(OPERATION_SHARDS, PK_PREFIX.operation);

/** The partitions of the large requests, one per shard. */
export const OPERATION_REQUEST_PARTITIONS = shardPartitions(OPERATION_SHARDS, PK_PREFIX.operationRequest);

/** The partitions of the queue (`OPERATION_QUEUE_SHARDS`, one): every dispatch read queries them all and merges. */
export const OPERATION_QUEUE_PARTITIONS = shardPartitions(OPERATION_QUEUE_SHARDS, PK_PREFIX.operationQueue);

export function operationKey(id: string): Key {
  return { pk: OPERATION_PARTITIONS[operationShard(id)] as string, sk: id };
}

/** Keyed by the request's hash too: two requests racing for one Idempotency-Key never overwrite each other's. */
export function operationRequestKey(id: string, requestHash: string): Key {
  return { pk: OPERATION_REQUEST_PARTITIONS[operationShard(id)] as string, sk: `${id}#${requestHash}` };
}

export function operationQueueKey(id: string): Key {
  return { pk: OPERATION_QUEUE_PARTITIONS[operationShard(id) % OPERATION_QUEUE_SHARDS] as string, sk: id };
}

/** Whether `pk` is one of the operation items' partitions. */
export const isOperationPartition = partitionTest(OPERATION_PARTITIONS);

/** Whether `pk` is one of the large requests' partitions. */
export const isOperationRequestPartition = partitionTest(OPERATION_REQUEST_PARTITIONS);

/** Whether `pk` is one of the queue's partitions. */
export const isOperationQueuePartition = partitionTest(OPERATION_QUEUE_PARTITIONS);

/** The partition of an account's operation entries. */
export function accountOperationsPk(account: string): string {
  return `${PK_PREFIX.operationByAccount}${account}`;
}

/** An account's entry for one operation: by creation time, then id, so a Query reads them newest first. */
export function accountOperationKey(account: string, createdAt: number, id: string): Key {
  return { pk: accountOperationsPk(account), sk: `${padMs(createdAt)}#${id}` };
}
