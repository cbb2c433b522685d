import { DeleteCommand, PutCommand, type DeleteCommandInput, type PutCommandInput, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_LIMIT, batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { queryAll } from '../core/query.ts';
import { cachePk, progressSk, type Scope } from './keys.ts';

/**
 * The cache's bookkeeping of its scopes in `CACHE#<account>`: per scope the resourceVersion a watch
 * can resume from (the set of scopes last declared is `scope-set.ts`).
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

export async function scopeProgress(t: TableRef, account: string): Promise<ScopeProgressRecord[]> {
  const items = await queryAll(t, scopeProgressParams(t.tableName, account));
  return items.map((i) => ({
    scope: { group: i.group as string, kind: i.kind as string, namespace: i.namespace as string },
    resourceVersion: i.rv as string,
    objects: i.objects as number,
    cluster: typeof i.cluster === 'string' ? i.cluster : '',
    at: i.at as number,
  }));
}
