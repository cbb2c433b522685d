import { DeleteCommand, GetCommand, type BatchWriteCommandInput, type GetCommandInput, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_LIMIT, batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { queryAll } from '../core/query.ts';
import { cachePk, SCOPE_SET_PREFIX, SCOPES_SK, scopeSetKindSk, type Scope } from './keys.ts';
import { scopeSetKindKey, scopeSetKinds, type ScopeSetKind } from './scope-set-kinds.ts';

/**
 * The set of scopes an account's cache last declared (docs/table.md#the-resource-cache), one item per
 * kind: `CACHE#<account>` / `SCOPESET#<Kind>#<group>#`, with `group`, `kind` and the kind's
 * namespaces as JSON text (`[""]`: everywhere). One item for the whole set grew past the table's
 * 400 KB with many namespaces listed (200 namespaces of 50 kinds is 10,000 scopes), and a set too
 * large to write was retried forever with every later change of the account behind it. A kind's item
 * holds only that kind's namespaces, and a new set writes only the kinds it changes.
 */

/** The scope set as stored. */
export interface StoredScopeSet {
  kinds: ScopeSetKind[];
  /** The set is (also) in the single item of earlier versions, deleted at the next write. */
  single: boolean;
}

export function scopeSetParams(tableName: string, account: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': cachePk(account), ':prefix': SCOPE_SET_PREFIX },
    ConsistentRead: true,
  };
}

export function singleScopeSetParams(tableName: string, account: string): GetCommandInput {
  return { TableName: tableName, Key: { pk: cachePk(account), sk: SCOPES_SK }, ConsistentRead: true };
}

/**
 * The requests that make the stored set `scopes`: a put of each kind that is new or whose namespaces
 * changed (every kind while the single item of earlier versions is there), and a delete of each kind
 * no longer in it. The single item is deleted after these (`replaceScopeSet`).
 */
export function replaceScopeSetRequests(tableName: string, account: string, before: StoredScopeSet | undefined, scopes: readonly Scope[], at: number): NonNullable<BatchWriteCommandInput['RequestItems']>[string] {
  const pk = cachePk(account);
  const stored = new Map((before?.kinds ?? []).map((k) => [scopeSetKindKey(k), k]));
  const after = scopeSetKinds(scopes);
  const requests: NonNullable<BatchWriteCommandInput['RequestItems']>[string] = [];
  for (const k of after) {
    const old = stored.get(scopeSetKindKey(k));
    // The single item is going: every kind it holds is written to an item of its own.
    if (old !== undefined && !before!.single && JSON.stringify(old.namespaces) === JSON.stringify(k.namespaces)) continue;
    requests.push({ PutRequest: { Item: { pk, sk: scopeSetKindSk(k), group: k.group, kind: k.kind, namespaces: JSON.stringify(k.namespaces), at } } });
  }
  const kept = new Set(after.map(scopeSetKindKey));
  for (const k of stored.values()) if (!kept.has(scopeSetKindKey(k))) requests.push({ DeleteRequest: { Key: { pk, sk: scopeSetKindSk(k) } } });
  return requests;
}

/** The scope set last declared, or undefined when none was. */
export async function readScopeSet(t: TableRef, account: string): Promise<StoredScopeSet | undefined> {
  const [kinds, single] = await Promise.all([
    queryKinds(t, account),
    t.client.send(new GetCommand(singleScopeSetParams(t.tableName, account))).then((out) => out.Item?.scopes as Scope[] | undefined),
  ]);
  if (kinds.length === 0 && single === undefined) return undefined;
  // A kind with an item of its own was written after the single item.
  const own = new Set(kinds.map(scopeSetKindKey));
  const fromSingle = scopeSetKinds(single ?? []).filter((k) => !own.has(scopeSetKindKey(k)));
  return { kinds: [...kinds, ...fromSingle], single: single !== undefined };
}

async function queryKinds(t: TableRef, account: string): Promise<ScopeSetKind[]> {
  const items = await queryAll(t, scopeSetParams(t.tableName, account));
  return items.map((i) => ({ group: i.group as string, kind: i.kind as string, namespaces: JSON.parse(i.namespaces as string) as string[] }));
}

/** Stores `scopes` as the account's scope set, given the set stored before (`readScopeSet`). */
export async function replaceScopeSet(t: TableRef, account: string, before: StoredScopeSet | undefined, scopes: readonly Scope[], at: number): Promise<void> {
  const requests = replaceScopeSetRequests(t.tableName, account, before, scopes, at);
  for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT) {
    await batchWrite(t, { RequestItems: { [t.tableName]: requests.slice(i, i + BATCH_WRITE_LIMIT) } });
  }
  // Last: until every kind has its own item, the single one still says what the others do not.
  if (before?.single === true) await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: singleScopeSetParams(t.tableName, account).Key }));
}
