import { DeleteCommand, GetCommand, PutCommand, type DeleteCommandInput, type PutCommandInput, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord } from '../../accounts/model.ts';
import { accountAccess } from '../../accounts/permissions.ts';
import { runBounded } from '../core/bounded.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { ACCESS_BUILT_KEY, accessKey } from './keys.ts';
import { allAccounts } from './records.ts';

/**
 * The access index (`ACCESS` / name): one small item per account whose served definition restricts
 * reading, with `read`, the roles that may read it, and `v`, the account version it was taken from.
 * It lets the GET list of a caller who may not read everything find what to leave out without
 * reading every account. The source sync keeps it (shared/table/sources/sync.ts), after each definition
 * write and before the membership hash, so a crash in between is redone by the next sync. Entries
 * move only forward in account version; an entry that trails its account (a race between two sources
 * writing one account, or a crash) makes a list hide an open account or count a restricted one, never
 * serve one the caller may not read: the list checks each item it serves (functions/accounts/service.ts).
 */

// ---- pure builders ----

export function putAccessParams(tableName: string, name: string, read: readonly string[], version: number): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...accessKey(name), read: [...read], v: version },
    ConditionExpression: 'attribute_not_exists(pk) OR #v <= :v',
    ExpressionAttributeNames: { '#v': 'v' },
    ExpressionAttributeValues: { ':v': version },
  };
}

/** Deletes the entry; with `version`, only when it was not taken from a newer version of the account. */
export function deleteAccessParams(tableName: string, name: string, version?: number): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: accessKey(name),
    ...(version === undefined
      ? {}
      : { ConditionExpression: 'attribute_not_exists(pk) OR #v <= :v', ExpressionAttributeNames: { '#v': 'v' }, ExpressionAttributeValues: { ':v': version } }),
  };
}

export function queryAccessParams(tableName: string): QueryCommandInput {
  return { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.access } };
}

/** The entry an account needs: its read roles when restricted, undefined when every caller may read it. */
export function accessEntryOf(record: Pick<AccountRecord, 'defs'>): readonly string[] | undefined {
  const access = accountAccess(record);
  return access.kind === 'restricted' ? access.read : undefined;
}

// ---- I/O ----

/** Makes the account's entry match its definitions (idempotent; an older version never overwrites a newer one). */
export async function syncAccessEntry(t: TableRef, record: AccountRecord): Promise<void> {
  const read = accessEntryOf(record);
  if (read === undefined) await tryConditional(() => t.client.send(new DeleteCommand(deleteAccessParams(t.tableName, record.name, record.version))));
  else await tryConditional(() => t.client.send(new PutCommand(putAccessParams(t.tableName, record.name, read, record.version))));
}

/**
 * The entry of an account item just created: a new account starts its versions again at 1, so its
 * entry replaces whatever an earlier account of that name left, without a version condition.
 */
export async function putNewAccessEntry(t: TableRef, record: AccountRecord): Promise<void> {
  const item = newAccessEntryItem(record);
  if (item !== undefined) await t.client.send(new PutCommand({ TableName: t.tableName, Item: item }));
}

/** The entry of an account item just created, as `putNewAccessEntry` writes it; undefined when it needs none. */
export function newAccessEntryItem(record: AccountRecord): Record<string, unknown> | undefined {
  const read = accessEntryOf(record);
  return read === undefined ? undefined : { ...accessKey(record.name), read: [...read], v: record.version };
}

/** Removes the entry of an account that no longer exists. */
export async function dropAccessEntry(t: TableRef, name: string): Promise<void> {
  await t.client.send(new DeleteCommand(deleteAccessParams(t.tableName, name)));
}

/**
 * Every restricted account with its read roles, in name order. One Query per MB of entries (an entry
 * is about 40 bytes plus the role names), eventually consistent like the list it serves.
 */
export async function readAccessIndex(t: TableRef): Promise<Map<string, readonly string[]>> {
  const items = await queryAll(t, queryAccessParams(t.tableName));
  return new Map(items.filter((item) => item.sk !== ACCESS_BUILT_KEY.sk).map((item) => [item.sk as string, item.read as string[]]));
}

/**
 * Rewrites the index from the account items, for data written before it existed or after a repair
 * by hand. Reads every account, so it is an operator's or a start-up job.
 */
export async function rebuildAccessIndex(t: TableRef): Promise<{ restricted: number }> {
  const before = await readAccessIndex(t);
  const wanted = new Set<string>();
  for await (const page of allAccounts(t)) {
    const restricted = page.filter((record) => accessEntryOf(record) !== undefined);
    restricted.forEach((record) => wanted.add(record.name));
    await runBounded(restricted.map((record) => () => syncAccessEntry(t, record)), 8);
  }
  await runBounded([...before.keys()].filter((name) => !wanted.has(name)).map((name) => () => dropAccessEntry(t, name)), 8);
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...ACCESS_BUILT_KEY } }));
  return { restricted: wanted.size };
}

/** Builds the index when it was never built (one small read when it was). True when it built it. */
export async function ensureAccessIndex(t: TableRef): Promise<boolean> {
  const out = await t.client.send(new GetCommand({ TableName: t.tableName, Key: ACCESS_BUILT_KEY, ConsistentRead: true }));
  if (out.Item !== undefined) return false;
  await rebuildAccessIndex(t);
  return true;
}
