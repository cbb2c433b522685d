import { batchWriteAll } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { queryAll } from '../core/query.ts';
import { sourceMemberKey, sourcePk } from './keys.ts';

/**
 * A source's membership items (`SOURCE#<sourceId>` / name, with the hash of the stored definition).
 * Only the sync of that source writes them, and it holds the source's lock while it does
 * (shared/table/sources/lock.ts): no other writer can change them meanwhile, so they go as plain puts
 * and deletes, 25 to a BatchWriteItem, with no condition.
 */

/**
 * Every member with its hash (none while its definition is being written). Read consistently: the
 * previous holder of the lock may have written them just before, and a stale read could take a name
 * that sync removed for one whose definition is still stored.
 */
export async function readSourceMembers(t: TableRef, sourceId: string): Promise<Map<string, string | undefined>> {
  const items = await queryAll(t, {
    TableName: t.tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': sourcePk(sourceId) },
    ConsistentRead: true,
  });
  return new Map(items.map((item) => [item.sk as string, item.hash as string | undefined]));
}

/** Memberships without hash, written before the definitions: a crash after them makes the next sync redo the names. */
export function putPendingMembers(t: TableRef, sourceId: string, names: readonly string[], concurrency: number): Promise<void> {
  return batchWriteAll(t, names.map((name) => ({ PutRequest: { Item: sourceMemberKey(sourceId, name) } })), concurrency);
}

/** The hashes of definitions now stored, written last: from then on an unchanged definition costs no write. */
export function putMemberHashes(t: TableRef, sourceId: string, hashes: ReadonlyMap<string, string>, concurrency: number): Promise<void> {
  return batchWriteAll(t, [...hashes].map(([name, hash]) => ({ PutRequest: { Item: { ...sourceMemberKey(sourceId, name), hash } } })), concurrency);
}

export function deleteMembers(t: TableRef, sourceId: string, names: readonly string[], concurrency: number): Promise<void> {
  return batchWriteAll(t, names.map((name) => ({ DeleteRequest: { Key: sourceMemberKey(sourceId, name) } })), concurrency);
}
