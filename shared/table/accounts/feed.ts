import {
  QueryCommand,
  type BatchWriteCommandInput,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { queryShards, shardLimit } from '../core/sharded-query.ts';
import { CHANGE_PARTITIONS, changeKey, padMs } from './keys.ts';

/**
 * The assignment work feed. The API appends one entry per account it activates, re-registers while
 * active, or removes; driver replicas read "everything since my cursor" and act on the account's
 * current item (the entry's generation tells a stale entry from a fresh one). Entries are keyed by
 * time, name and generation, so appending the same entry twice is the same item, in the feed shard of
 * the name's account shard (keys.ts), so an account's entries stay in one partition, in order.
 *
 * The account write and the feed write are two writes: a crash between them leaves an account whose
 * change is not in the feed, which the driver's periodic full reconcile repairs. A small activation
 * appends its entries alongside its writes (functions/accounts/service.ts), so an entry may also come
 * before its write, or for a write that failed; the driver's feed reader reads such an entry again.
 */
export const CHANGE_ACTIONS = ['assign', 'remove'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export interface Change {
  name: string;
  action: ChangeAction;
  generation: number;
  /** ms since epoch, the writer's clock. */
  at: number;
}

/** Feed entries are kept this long; real DynamoDB deletes them by TTL, `pruneChanges` does it elsewhere. */
export const CHANGE_RETENTION_MS = 7 * 24 * 3600 * 1000;

export function changeItem(change: Change): Record<string, unknown> {
  return {
    ...changeKey(change.at, change.name, change.generation),
    ...change,
    [TTL_ATTRIBUTE]: Math.ceil((change.at + CHANGE_RETENTION_MS) / 1000),
  };
}

/** Up to 25 entries per BatchWriteItem (DynamoDB's limit); plain puts, since entries are idempotent. */
export function appendChangesParams(tableName: string, changes: readonly Change[]): BatchWriteCommandInput {
  if (changes.length > 25) throw new RangeError('at most 25 changes per batch');
  return { RequestItems: { [tableName]: changes.map((c) => ({ PutRequest: { Item: changeItem(c) } })) } };
}

/** A cursor is the sort key of the last entry read; a time cursor starts at that ms. */
export function cursorAt(ms: number): string {
  return padMs(ms);
}

/**
 * Entries after `cursor`: a Query per feed shard (`sk > cursor`, each asked for its share of `limit`,
 * `shardLimit`), to be sent together and merged by sort key.
 */
export function changesSinceParams(tableName: string, cursor: string, limit: number): QueryCommandInput[] {
  return CHANGE_PARTITIONS.map((pk) => ({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND sk > :cursor',
    ExpressionAttributeValues: { ':pk': pk, ':cursor': cursor },
    Limit: shardLimit(limit, CHANGE_PARTITIONS.length),
    ConsistentRead: true,
  }));
}

/** The same read, keys only: an entry's sort key holds its time, name and generation. */
export function changeKeysSinceParams(tableName: string, cursor: string, limit: number): QueryCommandInput[] {
  return changesSinceParams(tableName, cursor, limit).map((input) => ({ ...input, ProjectionExpression: 'sk' }));
}

/** An entry as its sort key tells it: `<13-digit ms>#<name>#<10-digit generation>`. */
export interface ChangeKey {
  sk: string;
  name: string;
  at: number;
  generation: number;
}

export function parseChangeKey(sk: string): ChangeKey {
  return { sk, at: Number(sk.slice(0, 13)), name: sk.slice(14, -11), generation: Number(sk.slice(-10)) };
}

/**
 * Appends the entries of a batch while its accounts are being written: every 25 entries (one
 * BatchWriteItem) go to the table as soon as they are added, so driver replicas start on the first
 * accounts while the rest are still written. `close()` appends what is left and resolves once every
 * entry is in the table, or throws the first failure after the others settled.
 */
export class ChangeAppender {
  readonly #t: TableRef;
  #pending: Change[] = [];
  readonly #writes: Promise<void>[] = [];

  constructor(t: TableRef) {
    this.#t = t;
  }

  add(change: Change): void {
    this.#pending.push(change);
    if (this.#pending.length >= 25) this.#flush();
  }

  async close(): Promise<void> {
    this.#flush();
    const failed = (await Promise.allSettled(this.#writes)).find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const chunk = this.#pending;
    this.#pending = [];
    const write = batchWrite(this.#t, appendChangesParams(this.#t.tableName, chunk));
    write.catch(() => undefined); // handled in close(), which may come after the failure
    this.#writes.push(write);
  }
}

export async function appendChanges(t: TableRef, changes: readonly Change[]): Promise<void> {
  const appender = new ChangeAppender(t);
  for (const c of changes) appender.add(c);
  await appender.close();
}

/**
 * Entries after `cursor`, oldest first, and the cursor to pass next time: at most `limit`, read from
 * every shard at once and merged, and never past a sort key where a shard's page was cut, so that
 * reading on from the cursor reads every entry once. `more` says whether entries may follow. Writers'
 * clocks differ a little, so a reader should start a little before its last cursor (entries are
 * idempotent to replay).
 */
export async function changesSince(t: TableRef, cursor: string, limit = 100): Promise<{ changes: Change[]; cursor: string; more: boolean }> {
  const { items, more, after } = await queryShards(t, changesSinceParams(t.tableName, cursor, limit), limit);
  const changes = items.map((i) => ({
    name: i.name as string,
    action: i.action as ChangeAction,
    generation: i.generation as number,
    at: i.at as number,
  }));
  return { changes, cursor: after ?? cursor, more };
}

/**
 * `changesSince` for a reader that needs only which accounts changed (the driver's feed reader): the
 * Queries return the sort keys alone, so re-reading a window of 1,000 entries moves and decodes a
 * fraction of the items.
 */
export async function changeKeysSince(t: TableRef, cursor: string, limit = 100): Promise<{ keys: ChangeKey[]; cursor: string; more: boolean }> {
  const { items, more, after } = await queryShards(t, changeKeysSinceParams(t.tableName, cursor, limit), limit);
  return { keys: items.map((i) => parseChangeKey(i.sk as string)), cursor: after ?? cursor, more };
}

/** Deletes entries older than `beforeMs` in every shard (where the table has no TTL deletion, as in dynalite). */
export async function pruneChanges(t: TableRef, beforeMs: number): Promise<number> {
  const deleted = await Promise.all(CHANGE_PARTITIONS.map((pk) => pruneShard(t, pk, beforeMs)));
  return deleted.reduce((a, b) => a + b, 0);
}

async function pruneShard(t: TableRef, pk: string, beforeMs: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const out = await t.client.send(
      new QueryCommand({
        TableName: t.tableName,
        KeyConditionExpression: 'pk = :pk AND sk < :before',
        ExpressionAttributeValues: { ':pk': pk, ':before': padMs(beforeMs) },
        ProjectionExpression: 'pk, sk',
        Limit: 25,
      }),
    );
    const keys = out.Items ?? [];
    if (keys.length === 0) return deleted;
    await batchWrite(t, { RequestItems: { [t.tableName]: keys.map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } })) } });
    deleted += keys.length;
  }
}
