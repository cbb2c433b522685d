import { DeleteCommand, PutCommand, type DeleteCommandInput, type PutCommandInput, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_LIMIT, batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { compress, decompress, MAX_MESSAGE_JSON_BYTES } from '../core/compressed.ts';
import { queryAll } from '../core/query.ts';
import { cachePk, progressSk, SCOPES_SEEN_SK, type Scope } from './keys.ts';

/**
 * The cache's bookkeeping of its scopes in `CACHE#<account>`: per scope the resourceVersion a watch
 * can resume from (the set of scopes last declared is `scope-set.ts`), and when each was last seen
 * current.
 *
 * A resume takes only progress recorded recently enough (`maxResumableResourceAgeMs`), so the caching
 * agent reports every scope's version once a minute even when nothing changed. Written again as it is,
 * that would cost a write unit per scope a minute for every quiet account, most of all a fleet pays at
 * rest. A version the table already holds is instead noted in one item for the account
 * (`SCOPES_SEEN_SK`: each scope's version and when it was seen, compressed), and a progress record is as
 * recent as the later of its own time and the time its unchanged version was last seen
 * (docs/table.md#the-resource-cache).
 */

export interface ScopeProgressRecord {
  scope: Scope;
  resourceVersion: string;
  objects: number;
  /** The API server the versions are of (its URL, as the caching agent named it); empty when not known. */
  cluster: string;
  /** When the driver recorded it (ms, driver clock). */
  at: number;
}

// Where each watch can resume.

export function putScopeProgressParams(tableName: string, account: string, p: ScopeProgressRecord): PutCommandInput {
  return {
    TableName: tableName,
    Item: {
      pk: cachePk(account),
      sk: progressSk(p.scope),
      group: p.scope.group,
      kind: p.scope.kind,
      namespace: p.scope.namespace,
      rv: p.resourceVersion,
      objects: p.objects,
      cluster: p.cluster,
      at: p.at,
    },
  };
}

export function deleteScopeProgressParams(tableName: string, account: string, scope: Scope): DeleteCommandInput {
  return { TableName: tableName, Key: { pk: cachePk(account), sk: progressSk(scope) } };
}

export function scopeProgressParams(tableName: string, account: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': cachePk(account), ':prefix': 'SCOPE#' },
    ConsistentRead: true,
  };
}

export async function putScopeProgress(t: TableRef, account: string, p: ScopeProgressRecord): Promise<void> {
  await t.client.send(new PutCommand(putScopeProgressParams(t.tableName, account, p)));
}

/** Records the progress of many scopes of one account, 25 to a BatchWriteItem (plain puts, as `putScopeProgress`). */
export async function putScopeProgressMany(t: TableRef, account: string, records: readonly ScopeProgressRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += BATCH_WRITE_LIMIT) {
    const puts = records.slice(i, i + BATCH_WRITE_LIMIT).map((p) => ({ PutRequest: { Item: putScopeProgressParams(t.tableName, account, p).Item! } }));
    await batchWrite(t, { RequestItems: { [t.tableName]: puts } });
  }
}

export async function deleteScopeProgress(t: TableRef, account: string, scope: Scope): Promise<void> {
  await t.client.send(new DeleteCommand(deleteScopeProgressParams(t.tableName, account, scope)));
}

/** A version seen current, and when: the entry of one scope (its progress key) in the seen item. */
export interface SeenVersion {
  rv: string;
  cluster: string;
  at: number;
}

/** The seen item's entries, by progress key, at most a few bytes each once compressed. */
export type ScopesSeen = Record<string, SeenVersion>;

/**
 * The most the seen item holds, compressed, well inside the table's 400 KB an item. Tens of thousands
 * of scopes (many kinds in hundreds of listed namespaces) could pass it; their versions are then
 * written record by record, as without the item.
 */
export const MAX_SEEN_ITEM_BYTES = 300 * 1024;

export function putScopesSeenParams(tableName: string, account: string, seenGzip: Uint8Array): PutCommandInput {
  return { TableName: tableName, Item: { pk: cachePk(account), sk: SCOPES_SEEN_SK, seenGzip } };
}

/**
 * Replaces the account's seen item with `seen`, one small write whatever the number of scopes; false,
 * writing nothing, when it would pass `MAX_SEEN_ITEM_BYTES`.
 */
export async function putScopesSeen(t: TableRef, account: string, seen: ScopesSeen): Promise<boolean> {
  const seenGzip = compress(seen);
  if (seenGzip.length > MAX_SEEN_ITEM_BYTES) return false;
  await t.client.send(new PutCommand(putScopesSeenParams(t.tableName, account, seenGzip)));
  return true;
}

/** Each scope's progress, as recent as its version was last seen (strongly consistent: a resume reads it). */
export async function scopeProgress(t: TableRef, account: string): Promise<ScopeProgressRecord[]> {
  const items = await queryAll(t, scopeProgressParams(t.tableName, account));
  const seenItem = items.find((i) => i.sk === SCOPES_SEEN_SK);
  const seen = seenItem?.seenGzip instanceof Uint8Array ? decompress<ScopesSeen>(seenItem.seenGzip, MAX_MESSAGE_JSON_BYTES) : {};
  return items
    .filter((i) => i !== seenItem)
    .map((i) => {
      const record: ScopeProgressRecord = {
        scope: { group: i.group as string, kind: i.kind as string, namespace: i.namespace as string },
        resourceVersion: i.rv as string,
        objects: i.objects as number,
        cluster: typeof i.cluster === 'string' ? i.cluster : '',
        at: i.at as number,
      };
      const v = seen[i.sk as string];
      return v !== undefined && v.rv === record.resourceVersion && v.cluster === record.cluster && v.at > record.at ? { ...record, at: v.at } : record;
    });
}
