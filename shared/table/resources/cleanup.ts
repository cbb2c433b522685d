import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DeleteCommandInput, type PutCommandInput, type QueryCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord } from '../../accounts/model.ts';
import { BATCH_WRITE_LIMIT, batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK, type Key } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { accountOperationsPk } from '../operations/keys.ts';
import { cachePk, podMetricsPk, resourcePk } from './keys.ts';

/**
 * Cleanup markers (docs/table.md, "Cache cleanup"): one item per account whose cached objects, scope
 * progress, scope set, health, pod metrics and operation-list entries are still to be deleted because
 * the account went (or no agent caches it any more). The marker is written before the write that removes the account, so
 * a crash in between leaves a marker for an account that still has a writer, which the cleanup drops
 * unworked. The cleanup works a marker one batch at a time under a lease kept in the marker itself,
 * so one replica works it at a time and another picks it up where it stopped.
 */

export interface CacheCleanupMarker {
  account: string;
  /** When the account went (ms, the remover's clock). */
  removedAt: number;
}

/** How long a holder keeps a marker without renewing it (renewed before every batch). */
export const CLEANUP_LEASE_MS = 30_000;

export function cleanupMarkerKey(account: string): Key {
  return { pk: PK.cacheCleanup, sk: account };
}

/**
 * The partitions the cache keeps per account, in the order the cleanup empties them: the resume
 * progress first, so that while any object is gone no progress is left to resume from, and an agent
 * that caches the account again lists (and so writes every object again) instead of resuming.
 */
export function accountCachePartitions(account: string): string[] {
  return [cachePk(account), resourcePk(account), podMetricsPk(account)];
}

/**
 * What the cleanup empties: the cache, then the account's operation-list entries (the operations
 * themselves stay readable by id until they expire).
 */
export function accountDataPartitions(account: string): string[] {
  return [...accountCachePartitions(account), accountOperationsPk(account)];
}

/**
 * True while something may still write the account's cache: it is registered for migration (a
 * re-POST counts: the marker is cancelled) or an agent announces it as a static account.
 */
export function cacheHasWriter(record: AccountRecord | undefined): boolean {
  if (record === undefined) return false;
  return record.registration !== undefined || Object.values(record.defs).some((d) => d.kind === 'static-agent-config');
}

export function markCacheCleanupParams(tableName: string, account: string, now: number): PutCommandInput {
  return { TableName: tableName, Item: { ...cleanupMarkerKey(account), account, removedAt: now } };
}

/**
 * True while the driver has not finished taking the account from its agents (an agent entry or a
 * caching agent is left): the agent that cached it may still be writing, so the cleanup waits.
 */
export function cacheRemovalPending(record: AccountRecord | undefined): boolean {
  return record !== undefined && (record.cachingAgentId !== undefined || Object.keys(record.agents).length > 0);
}

/** Records that the account's cache is to go. A later removal of the same name replaces the marker (and its lease). */
export async function markCacheCleanup(t: TableRef, account: string, now: number): Promise<void> {
  await t.client.send(new PutCommand(markCacheCleanupParams(t.tableName, account, now)));
}

/**
 * True while the account's cache is to go: its marker is there and nothing writes the cache. The
 * resource endpoints then answer as for an account that does not exist (docs/api.md, DELETE).
 */
export async function cacheCleanupPending(t: TableRef, record: AccountRecord): Promise<boolean> {
  if (cacheHasWriter(record)) return false;
  const out = await t.client.send(new GetCommand({ TableName: t.tableName, Key: cleanupMarkerKey(record.name), ProjectionExpression: 'pk', ConsistentRead: true }));
  return out.Item !== undefined;
}

export async function pendingCacheCleanups(t: TableRef): Promise<CacheCleanupMarker[]> {
  const items = await queryAll(t, {
    TableName: t.tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': PK.cacheCleanup },
    ProjectionExpression: 'account, removedAt',
    ConsistentRead: true,
  });
  return items.map((i) => ({ account: i.account as string, removedAt: i.removedAt as number }));
}

/**
 * Takes or renews the lease on a marker: only while it is the same removal (`removedAt`) and free, expired
 * or already this holder's.
 */
export function claimCacheCleanupParams(tableName: string, marker: CacheCleanupMarker, holder: string, now: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: cleanupMarkerKey(marker.account),
    UpdateExpression: 'SET #holder = :holder, #until = :until',
    ConditionExpression: 'removedAt = :removedAt AND (attribute_not_exists(#holder) OR #until < :now OR #holder = :holder)',
    ExpressionAttributeNames: { '#holder': 'holder', '#until': 'until' },
    ExpressionAttributeValues: { ':holder': holder, ':until': now + CLEANUP_LEASE_MS, ':now': now, ':removedAt': marker.removedAt },
  };
}

export function claimCacheCleanup(t: TableRef, marker: CacheCleanupMarker, holder: string, now: number): Promise<boolean> {
  return tryConditional(() => t.client.send(new UpdateCommand(claimCacheCleanupParams(t.tableName, marker, holder, now))));
}

/** Deletes the marker of this removal held by this holder; a newer removal's marker stays. */
export function finishCacheCleanupParams(tableName: string, marker: CacheCleanupMarker, holder: string): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: cleanupMarkerKey(marker.account),
    ConditionExpression: 'removedAt = :removedAt AND #holder = :holder',
    ExpressionAttributeNames: { '#holder': 'holder' },
    ExpressionAttributeValues: { ':removedAt': marker.removedAt, ':holder': holder },
  };
}

export function finishCacheCleanup(t: TableRef, marker: CacheCleanupMarker, holder: string): Promise<boolean> {
  return tryConditional(() => t.client.send(new DeleteCommand(finishCacheCleanupParams(t.tableName, marker, holder))));
}

export function cacheBatchParams(tableName: string, pk: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk',
    Limit: BATCH_WRITE_LIMIT,
    ConsistentRead: true,
  };
}

/** The keys of the next batch of the account's data to delete (at most 25), empty when none is left. */
export async function nextCacheBatch(t: TableRef, account: string): Promise<Key[]> {
  for (const pk of accountDataPartitions(account)) {
    const out = await t.client.send(new QueryCommand(cacheBatchParams(t.tableName, pk)));
    const keys = (out.Items ?? []).map((i) => ({ pk: i.pk as string, sk: i.sk as string }));
    if (keys.length > 0) return keys;
  }
  return [];
}

/** One BatchWriteItem deleting up to 25 keys. */
export async function deleteCacheBatch(t: TableRef, keys: readonly Key[]): Promise<void> {
  if (keys.length === 0) return;
  await batchWrite(t, { RequestItems: { [t.tableName]: keys.map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } })) } });
}
