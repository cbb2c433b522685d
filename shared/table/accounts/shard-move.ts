import { DeleteCommand, PutCommand, type DeleteCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { drainPartition } from '../core/partition-drain.ts';
import { PK } from '../core/keys.ts';
import { accountKey } from './keys.ts';

/**
 * A table written before the account items were spread over shards holds them all in `ACCOUNT`
 * (`PK.unshardedAccount`). A driver replica moves them to their shards at start, before it serves
 * (docs/table.md#moving-a-table-written-before-the-shards): each item is put under its shard's key,
 * then deleted from the old partition. Both writes are conditional, so replicas that start together
 * move each item once and lose no write:
 *
 * - the put holds when the shard has no item of the name, or an older one (a lower `version`: another
 *   replica's copy of an earlier state); a shard item at the same or a later version is kept;
 * - the delete holds only while the old item is still at the version copied; when it changed since
 *   (a replica of the earlier layout still writing), the next round copies it again.
 *
 * The work feed's old partition (`CHANGE`) is not moved: a replica's feed reader starts from the time
 * it starts, its first full reconcile settles every account, and the old entries expire by their TTL.
 */

function versionOf(item: Record<string, unknown>): number | undefined {
  return typeof item.version === 'number' ? item.version : undefined;
}

/** The old item under its shard's key, unless the shard holds the name at the same version or a later one. */
export function moveToShardParams(tableName: string, item: Record<string, unknown>): PutCommandInput {
  const version = versionOf(item);
  return {
    TableName: tableName,
    Item: { ...item, ...accountKey(String(item.sk)) },
    ...(version === undefined
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : { ConditionExpression: 'attribute_not_exists(pk) OR version < :v', ExpressionAttributeValues: { ':v': version } }),
  };
}

/** The old item's delete, while it is still what was copied. */
export function deleteUnshardedParams(tableName: string, item: Record<string, unknown>): DeleteCommandInput {
  const version = versionOf(item);
  return {
    TableName: tableName,
    Key: { pk: PK.unshardedAccount, sk: item.sk },
    ...(version === undefined
      ? { ConditionExpression: 'attribute_not_exists(version)' }
      : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': version } }),
  };
}

/**
 * Moves every item of the old partition to its shard; resolves with how many this replica deleted
 * from there (0 for a table written in shards, at the cost of one Query).
 */
export async function moveUnshardedAccounts(t: TableRef): Promise<number> {
  return drainPartition(t, PK.unshardedAccount, async (item) => {
    await tryConditional(() => t.client.send(new PutCommand(moveToShardParams(t.tableName, item))));
    return tryConditional(() => t.client.send(new DeleteCommand(deleteUnshardedParams(t.tableName, item))));
  });
}
