import type { AttributeValue, BatchWriteItemCommandInput } from '@aws-sdk/client-dynamodb';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_LIMIT, batchWriteItems } from '../core/batch.ts';
import { runBounded } from '../core/bounded.ts';
import type { TableRef } from '../core/client.ts';
import { queryAll } from '../core/query.ts';
import { kindPrefix, resourcePk, resourceSk, type ResourceRef } from './keys.ts';

/**
 * The cached objects of each account (docs/table.md, docs/cache.md): one item per object in the
 * account's `RESOURCE#<account>` partition, sorted by kind, group, namespace and name, holding the
 * compact form the caching agent sent. The cache's bookkeeping beside them is in `scopes.ts` and
 * `health.ts`; the cleanup of an account's cache when it goes is `cleanup.ts`.
 *
 * Object writes are plain BatchWriteItem puts and deletes: the driver coalesces changes and writes
 * each object's latest state, one writer per account (docs/cache.md explains why no condition is
 * needed).
 */

export type ResourceWrite =
  | { op: 'put'; ref: ResourceRef; resourceVersion: string; object: string; at: number }
  | { op: 'delete'; ref: ResourceRef };

export interface StoredResource {
  namespace: string;
  name: string;
  resourceVersion: string;
  /** The compact form, JSON text. */
  object: string;
  /** When the driver wrote it (ms). */
  updatedAt: number;
}

/** The item of an object, in DynamoDB's attribute-value form (written by the thousand: no marshalling). */
export function resourceItem(account: string, w: Extract<ResourceWrite, { op: 'put' }>): Record<string, AttributeValue> {
  return {
    pk: { S: resourcePk(account) },
    sk: { S: resourceSk(w.ref) },
    ns: { S: w.ref.namespace },
    name: { S: w.ref.name },
    rv: { S: w.resourceVersion },
    at: { N: String(w.at) },
    o: { S: w.object },
  };
}

/** At most 25 writes, each on another object (BatchWriteItem refuses two requests for one key). */
export function writeResourcesParams(tableName: string, account: string, writes: readonly ResourceWrite[]): BatchWriteItemCommandInput {
  if (writes.length > BATCH_WRITE_LIMIT) throw new RangeError(`at most ${BATCH_WRITE_LIMIT} writes per batch`);
  return {
    RequestItems: {
      [tableName]: writes.map((w) =>
        w.op === 'put'
          ? { PutRequest: { Item: resourceItem(account, w) } }
          : { DeleteRequest: { Key: { pk: { S: resourcePk(account) }, sk: { S: resourceSk(w.ref) } } } },
      ),
    },
  };
}

/** Writes every change, 25 to a request, `parallel` requests at a time. */
export async function writeResources(t: TableRef, account: string, writes: readonly ResourceWrite[], parallel = 8): Promise<void> {
  const tasks: (() => Promise<void>)[] = [];
  for (let i = 0; i < writes.length; i += BATCH_WRITE_LIMIT) {
    const input = writeResourcesParams(t.tableName, account, writes.slice(i, i + BATCH_WRITE_LIMIT));
    tasks.push(() => batchWriteItems(t, input));
  }
  await runBounded(tasks, parallel);
}

export interface ResourceFilter {
  /** Lower-case kind; without it every kind is read. */
  kind?: string;
  /** With `kind`: narrows to one group. */
  group?: string;
  namespace?: string;
  name?: string;
}

/**
 * One page of an account's objects in key order. The key condition narrows as far as the filter
 * allows (kind, then group, then namespace); what is left (a namespace without a group, a name) is a
 * filter expression, so a page may hold fewer than `limit` items while more follow.
 */
export function queryResourcesParams(tableName: string, account: string, filter: ResourceFilter, limit: number, startSk?: string): QueryCommandInput {
  let prefix = '';
  if (filter.kind !== undefined) {
    // An empty namespace here narrows to cluster-scoped objects (`<kind>#<group>##`), unlike an empty scope namespace.
    if (filter.group === undefined) prefix = `${filter.kind.toLowerCase()}#`;
    else prefix = kindPrefix(filter.kind, filter.group) + (filter.namespace === undefined ? '' : `${filter.namespace}#`);
  }
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': resourcePk(account) };
  const names: Record<string, string> = {};
  if (filter.namespace !== undefined && !(filter.kind !== undefined && filter.group !== undefined)) {
    filters.push('ns = :ns');
    values[':ns'] = filter.namespace;
  }
  if (filter.name !== undefined) {
    filters.push('#name = :name');
    values[':name'] = filter.name;
    names['#name'] = 'name';
  }
  if (prefix !== '') values[':prefix'] = prefix;
  return {
    TableName: tableName,
    KeyConditionExpression: prefix === '' ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
    ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
    ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
    Limit: limit,
    ...(startSk === undefined ? {} : { ExclusiveStartKey: { pk: resourcePk(account), sk: startSk } }),
  };
}

function storedResource(item: Record<string, unknown>): StoredResource {
  return {
    namespace: item.ns as string,
    name: item.name as string,
    resourceVersion: item.rv as string,
    object: item.o as string,
    updatedAt: item.at as number,
  };
}

/**
 * Up to `limit` objects after `startSk`, and the sort key to continue from when more may follow.
 * Reads on past pages a filter emptied, at most `maxReads` queries per call.
 */
export async function listResources(
  t: TableRef,
  account: string,
  filter: ResourceFilter,
  limit: number,
  startSk?: string,
  maxReads = 10,
): Promise<{ items: StoredResource[]; next?: string }> {
  const items: StoredResource[] = [];
  let from = startSk;
  for (let reads = 0; reads < maxReads; reads++) {
    const out = await t.client.send(new QueryCommand(queryResourcesParams(t.tableName, account, filter, limit - items.length, from)));
    for (const item of out.Items ?? []) items.push(storedResource(item));
    const last = out.LastEvaluatedKey?.sk as string | undefined;
    if (last === undefined) return { items };
    from = last;
    if (items.length >= limit) break;
  }
  return { items, next: from as string };
}

/** The keys and versions of one scope's objects, for a sync to find what the cluster no longer has. */
export function scopeKeysParams(tableName: string, account: string, prefix: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': resourcePk(account), ':prefix': prefix },
    ExpressionAttributeNames: { '#name': 'name', '#at': 'at' },
    ProjectionExpression: 'sk, ns, #name, #at',
    // Writes made just before (the changes the sync follows) must be seen.
    ConsistentRead: true,
  };
}

export interface StoredResourceKey {
  sk: string;
  namespace: string;
  name: string;
  /** When the driver that wrote the item took its change (ms, that driver's clock). */
  at: number;
}

export async function scopeKeys(t: TableRef, account: string, prefix: string): Promise<StoredResourceKey[]> {
  const items = await queryAll(t, scopeKeysParams(t.tableName, account, prefix));
  return items.map((i) => ({
    sk: i.sk as string,
    namespace: i.ns as string,
    name: i.name as string,
    at: typeof i.at === 'number' ? i.at : 0,
  }));
}
