import { ACCOUNT_PARTITIONS, CHANGE_PARTITIONS, accountKey } from '../../shared/table/accounts/keys.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { queryAllShards } from '../../shared/table/core/sharded-query.ts';

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
