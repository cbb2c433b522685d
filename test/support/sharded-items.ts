import { ACCOUNT_PARTITIONS, CHANGE_PARTITIONS, accountKey } from '../../shared/table/accounts/keys.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { queryAllShards } from '../../shared/table/core/sharded-query.ts';
import { OPERATION_PARTITIONS, OPERATION_QUEUE_PARTITIONS, OPERATION_REQUEST_PARTITIONS, operationShard } from '../../shared/table/operations/keys.ts';
import { operationIdOf } from '../../shared/table/operations/operations.ts';

/** Every item of the partitions `pks`, read strongly, in sort-key order: what a test checks the table by. */
function everyItemOf(t: TableRef, pks: readonly string[]): Promise<Record<string, unknown>[]> {
  return queryAllShards(
    t,
    pks.map((pk) => ({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true })),
  );
}

/** Every account item of every shard, in name order. */
export function everyAccountItem(t: TableRef): Promise<Record<string, unknown>[]> {
  return everyItemOf(t, ACCOUNT_PARTITIONS);
}

/** Every work-feed entry of every shard, in sort-key (time) order. */
export function everyFeedItem(t: TableRef): Promise<Record<string, unknown>[]> {
  return everyItemOf(t, CHANGE_PARTITIONS);
}

/** Every operation item of every shard, in id order. */
export function everyOperationItem(t: TableRef): Promise<Record<string, unknown>[]> {
  return everyItemOf(t, OPERATION_PARTITIONS);
}

/** Every large request's item of every shard. */
export function everyOperationRequestItem(t: TableRef): Promise<Record<string, unknown>[]> {
  return everyItemOf(t, OPERATION_REQUEST_PARTITIONS);
}

/** Every queue entry of every shard, in id order. */
export function everyQueueEntryItem(t: TableRef): Promise<Record<string, unknown>[]> {
  return everyItemOf(t, OPERATION_QUEUE_PARTITIONS);
}

/**
 * Names sorted, `inBusy` of them in the shard of `${prefix}0000` and `inOthers` in each other shard,
 * each shard's spread over the whole range: a busy shard beside quiet ones, whose pages are cut long
 * before theirs.
 */
export function skewedNames(prefix: string, inBusy: number, inOthers: number): string[] {
  const busy = accountKey(`${prefix}0000`).pk;
  const byShard = new Map<string, string[]>();
  for (let i = 0; i < 4000; i++) {
    const name = `${prefix}${String(i).padStart(4, '0')}`;
    const pk = accountKey(name).pk;
    byShard.set(pk, [...(byShard.get(pk) ?? []), name]);
  }
  const names: string[] = [];
  for (const [pk, candidates] of byShard) {
    const n = pk === busy ? inBusy : inOthers;
    for (let k = 0; k < n; k++) names.push(candidates[Math.floor((k * candidates.length) / n)] as string);
  }
  return names.sort();
}

/**
 * Idempotency keys of `account` and `caller` whose operations fill every operation shard, `perShard` to
 * a shard, the last shard's first: made in this order, neither the shards' order nor the ids' is the
 * order of creation.
 */
export function keysOverEveryShard(account: string, caller: string, perShard: number): string[] {
  const keys = Array.from({ length: 40 * perShard }, (_, i) => `spread-${i}`);
  const byShard = OPERATION_PARTITIONS.map((_, shard) => keys.filter((k) => operationShard(operationIdOf(account, caller, k)) === shard).slice(0, perShard));
  return byShard.reverse().flat();
}
