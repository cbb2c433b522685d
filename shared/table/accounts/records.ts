import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type BatchGetCommandInput,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, AgentResult, Definition, Registration } from '../../accounts/model.ts';
import type { AccountState } from '../../accounts/schema.ts';
import { VendorError } from '../../errors.ts';
import { batchGet } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { isConditionFailure } from '../core/conditional.ts';
import { queryShards, shardLimit } from '../core/sharded-query.ts';
import { ACCOUNT_PARTITIONS, accountKey } from './keys.ts';

/**
 * Account items: one per name, in the partition of its name's shard (`ACCOUNT#<shard>`, keys.ts),
 * holding every source's definition (`defs`, keyed by source id), the migration registration and state, and the per-agent assignment results
 * (`agents`, keyed by agentId). Every write raises `version`; writers that decide from what they read
 * condition on it.
 */

/** Fields a conditional update may change. `null` removes the attribute. */
export interface AccountChanges {
  registration?: Registration | null;
  state?: AccountState | null;
  generation?: number;
  lastAssignmentMsg?: string | null;
  /** Per-agent results to set (each keyed by its agentId). */
  setAgents?: readonly AgentResult[];
  /** AgentIds whose results to remove. */
  removeAgents?: readonly string[];
  cachingAgentId?: string | null;
  cachingEpoch?: number;
}

/** An account item as its record (without the table keys). */
export function accountFromItem(item: Record<string, unknown>): AccountRecord {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as AccountRecord;
}

// ---- pure builders ----

export function getAccountParams(tableName: string, name: string, consistent = false): GetCommandInput {
  return { TableName: tableName, Key: accountKey(name), ConsistentRead: consistent };
}

/** BatchGetItem takes at most 100 keys; callers split longer lists. */
export function batchGetAccountsParams(tableName: string, names: readonly string[], consistent = false): BatchGetCommandInput {
  return { RequestItems: { [tableName]: { Keys: names.map(accountKey), ConsistentRead: consistent } } };
}

/** Keys only, read consistently: whether each account item exists right now (at most 100 names). */
export function accountsExistParams(tableName: string, names: readonly string[]): BatchGetCommandInput {
  return { RequestItems: { [tableName]: { Keys: names.map(accountKey), ConsistentRead: true, ProjectionExpression: 'sk' } } };
}

export function newAccountRecord(name: string, now: number): AccountRecord {
  return { name, version: 1, generation: 0, defs: {}, agents: {}, updatedAt: now };
}

export function createAccountParams(tableName: string, record: AccountRecord): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...accountKey(record.name), ...record },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

export function setDefinitionParams(tableName: string, name: string, sourceId: string, def: Definition, now: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: accountKey(name),
    UpdateExpression: 'SET defs.#src = :def, version = version + :one, updatedAt = :now',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#src': sourceId },
    ExpressionAttributeValues: { ':def': def, ':one': 1, ':now': now },
    ReturnValues: 'ALL_NEW',
  };
}

export function removeDefinitionParams(tableName: string, name: string, sourceId: string, now: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: accountKey(name),
    UpdateExpression: 'REMOVE defs.#src SET version = version + :one, updatedAt = :now',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#src': sourceId },
    ExpressionAttributeValues: { ':one': 1, ':now': now },
    ReturnValues: 'ALL_NEW',
  };
}

export function deleteAccountParams(tableName: string, name: string, expectedVersion: number): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: accountKey(name),
    ConditionExpression: 'version = :expected',
    ExpressionAttributeValues: { ':expected': expectedVersion },
    ReturnValues: 'ALL_OLD',
  };
}

/**
 * The generic conditional update: applies `changes` only if the item is still at `expectedVersion`,
 * and raises the version. One item, one write, so a lost race is a clean `precondition_failed`.
 * `writeId`, when given, is stored as `lastWriteId` so the writer can recognise its own write later.
 * `returnItem: false` asks for nothing back: for a writer that holds the item it decided from, which
 * knows the item after the write without it (`accountAfter`).
 */
export function updateAccountParams(
  tableName: string,
  name: string,
  expectedVersion: number,
  changes: AccountChanges,
  now: number,
  writeId?: string,
  returnItem = true,
): UpdateCommandInput {
  const set: string[] = ['version = version + :one', 'updatedAt = :now'];
  const remove: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':one': 1, ':now': now, ':expected': expectedVersion };
  const scalar = (attr: keyof AccountChanges, value: unknown): void => {
    if (value === undefined) return;
    // Placeholders for every name: some (`state`) are DynamoDB reserved words.
    names[`#${attr}`] = attr;
    if (value === null) remove.push(`#${attr}`);
    else {
      set.push(`#${attr} = :${attr}`);
      values[`:${attr}`] = value;
    }
  };
  scalar('registration', changes.registration);
  scalar('state', changes.state);
  scalar('generation', changes.generation);
  scalar('lastAssignmentMsg', changes.lastAssignmentMsg);
  scalar('cachingAgentId', changes.cachingAgentId);
  scalar('cachingEpoch', changes.cachingEpoch);
  if (writeId !== undefined) {
    set.push('lastWriteId = :writeId');
    values[':writeId'] = writeId;
  }
  (changes.setAgents ?? []).forEach((result, i) => {
    names[`#sa${i}`] = result.agentId;
    values[`:sa${i}`] = storedEntry(result);
    set.push(`agents.#sa${i} = :sa${i}`);
  });
  (changes.removeAgents ?? []).forEach((agentId, i) => {
    names[`#ra${i}`] = agentId;
    remove.push(`agents.#ra${i}`);
  });
  return {
    TableName: tableName,
    Key: accountKey(name),
    UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: 'version = :expected',
    ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
    ...(returnItem ? { ReturnValues: 'ALL_NEW' as const } : {}),
  };
}

/**
 * A per-agent entry as it is written: `removing` is stored only when true, so that a condition on an
 * entry not being taken off its agent is `attribute_not_exists(...removing)` alone (answer-write.ts),
 * which costs the table a fraction of the same test with an OR.
 */
export function storedEntry(result: AgentResult): AgentResult {
  if (result.removing === true || !('removing' in result)) return result;
  const { removing: _removing, ...rest } = result;
  return rest;
}

/** `value` without the properties the table's marshalling drops (`removeUndefinedValues`), as a read returns it. */
function stored<T>(value: T): T {
  if (Array.isArray(value)) return value.map(stored) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, stored(v)])) as T;
}

/**
 * The item a write of `changes` (`updateAccountParams`) leaves behind, from the item it was
 * conditional on: that write holds only while the item is at `record.version`, and every write of an
 * account item but one raises the version, so the item was `record` then. The one exception is the
 * caching agent's `cluster` report (cluster-status.ts), which is kept as `record` has it.
 */
export function accountAfter(record: AccountRecord, changes: AccountChanges, now: number, writeId?: string): AccountRecord {
  const after: Record<string, unknown> = { ...record, version: record.version + 1, updatedAt: now };
  const scalars = ['registration', 'state', 'generation', 'lastAssignmentMsg', 'cachingAgentId', 'cachingEpoch'] as const;
  for (const attr of scalars) {
    const value = changes[attr];
    if (value === null) delete after[attr];
    else if (value !== undefined) after[attr] = stored(value);
  }
  if (writeId !== undefined) after.lastWriteId = writeId;
  const agents = { ...record.agents };
  for (const result of changes.setAgents ?? []) agents[result.agentId] = stored(storedEntry(result));
  for (const agentId of changes.removeAgents ?? []) delete agents[agentId];
  after.agents = agents;
  return after as unknown as AccountRecord;
}

/**
 * One page of accounts in name order after `startAfter`: a Query per shard (`sk > startAfter`, each
 * asked for its share of `limit`, `shardLimit`), to be sent together and merged by name
 * (`readAccountsAfter`).
 */
export function queryAccountsParams(tableName: string, limit: number, startAfter?: string, consistent = false): QueryCommandInput[] {
  return ACCOUNT_PARTITIONS.map((pk) => ({
    TableName: tableName,
    KeyConditionExpression: startAfter === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
    ExpressionAttributeValues: { ':pk': pk, ...(startAfter === undefined ? {} : { ':after': startAfter }) },
    Limit: shardLimit(limit, ACCOUNT_PARTITIONS.length),
    ...(consistent ? { ConsistentRead: true } : {}),
  }));
}

// ---- I/O ----

export async function getAccount(t: TableRef, name: string, options: { consistent?: boolean } = {}): Promise<AccountRecord | undefined> {
  const out = await t.client.send(new GetCommand(getAccountParams(t.tableName, name, options.consistent)));
  return out.Item === undefined ? undefined : accountFromItem(out.Item);
}

const READS_THROTTLED = 'the table keeps throttling account reads';

/** Reads many accounts by name. */
export async function getAccounts(
  t: TableRef,
  names: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, AccountRecord>> {
  const items = await batchGet(t, names, (chunk) => batchGetAccountsParams(t.tableName, chunk, options.consistent), READS_THROTTLED);
  return new Map(items.map((item) => accountFromItem(item)).map((record) => [record.name, record]));
}

/** The names among `names` whose account item exists, from consistent keys-only reads. */
export async function existingAccounts(t: TableRef, names: readonly string[]): Promise<Set<string>> {
  const items = await batchGet(t, names, (chunk) => accountsExistParams(t.tableName, chunk), READS_THROTTLED);
  return new Set(items.map((item) => item.sk as string));
}

/** Creates an account item (with `defs` when given); false when it already exists. */
export async function createAccount(t: TableRef, name: string, now: number, defs: Record<string, Definition> = {}): Promise<boolean> {
  try {
    await t.client.send(new PutCommand(createAccountParams(t.tableName, { ...newAccountRecord(name, now), defs })));
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** Sends a conditional account write; a failed condition becomes `precondition_failed`. */
async function sendConditional(t: TableRef, params: UpdateCommandInput): Promise<Record<string, unknown> | undefined> {
  try {
    return (await t.client.send(new UpdateCommand(params))).Attributes;
  } catch (err) {
    if (isConditionFailure(err)) {
      throw new VendorError('precondition_failed', `account ${String(params.Key?.sk)} changed since it was read`, { cause: err });
    }
    throw err;
  }
}

/** Applies `changes` if the account is still at `expectedVersion`; throws `precondition_failed` otherwise. */
export async function updateAccount(
  t: TableRef,
  name: string,
  expectedVersion: number,
  changes: AccountChanges,
  now: number,
  writeId?: string,
): Promise<AccountRecord> {
  return accountFromItem((await sendConditional(t, updateAccountParams(t.tableName, name, expectedVersion, changes, now, writeId))) ?? {});
}

/**
 * `updateAccount` for a writer holding the item it decided from (`record`, at the version the write
 * is conditional on): the table sends nothing back, which spares it encoding and sending the whole
 * item, and the item after the write is `accountAfter`. Throws `precondition_failed` when the item
 * changed since `record`.
 */
export async function writeAccount(t: TableRef, record: AccountRecord, changes: AccountChanges, now: number, writeId?: string): Promise<AccountRecord> {
  await sendConditional(t, updateAccountParams(t.tableName, record.name, record.version, changes, now, writeId, false));
  return accountAfter(record, changes, now, writeId);
}

/**
 * Read, decide, conditionally write, and start over when another writer got there first. `decide`
 * returns the changes to make, or undefined to leave the account as it is; it may throw to refuse.
 *
 * The SDK sends a write again when its answer is lost (a timeout, a dropped connection): the first
 * one may have landed, and the second then fails its version condition. Each write carries an id, so
 * that case is told apart from another writer's change by reading the item back: it is our write,
 * and it counts as done (`changed`), not as a race to decide again.
 */
export async function mutateAccount(
  t: TableRef,
  name: string,
  decide: (record: AccountRecord | undefined) => AccountChanges | undefined | Promise<AccountChanges | undefined>,
  now: () => number,
  options: { maxAttempts?: number; /** A record just read strongly, saving the first read. */ initial?: AccountRecord } = {},
): Promise<{ record: AccountRecord | undefined; changed: boolean }> {
  const maxAttempts = options.maxAttempts ?? 10;
  let known: { record: AccountRecord | undefined } | undefined = options.initial === undefined ? undefined : { record: options.initial };
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const record = known === undefined ? await getAccount(t, name, { consistent: true }) : known.record;
    const changes = await decide(record);
    if (changes === undefined || record === undefined) return { record, changed: false };
    const writeId = randomUUID();
    try {
      return { record: await writeAccount(t, record, changes, now(), writeId), changed: true };
    } catch (err) {
      if ((err as VendorError).code !== 'precondition_failed') throw err;
    }
    const current = await getAccount(t, name, { consistent: true });
    if (current?.lastWriteId === writeId) return { record: current, changed: true };
    known = { record: current };
  }
  throw new VendorError('precondition_failed', `account ${name} is being changed by others; try again`);
}

export async function setDefinition(t: TableRef, name: string, sourceId: string, def: Definition, now: number): Promise<AccountRecord | undefined> {
  try {
    const out = await t.client.send(new UpdateCommand(setDefinitionParams(t.tableName, name, sourceId, def, now)));
    return accountFromItem(out.Attributes ?? {});
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

export async function removeDefinition(t: TableRef, name: string, sourceId: string, now: number): Promise<AccountRecord | undefined> {
  try {
    const out = await t.client.send(new UpdateCommand(removeDefinitionParams(t.tableName, name, sourceId, now)));
    return accountFromItem(out.Attributes ?? {});
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/** Deletes the account if it is still at `expectedVersion`; false when it changed or is gone. */
export async function deleteAccount(t: TableRef, name: string, expectedVersion: number): Promise<boolean> {
  try {
    await t.client.send(new DeleteCommand(deleteAccountParams(t.tableName, name, expectedVersion)));
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/**
 * Up to `limit` accounts in name order after `startAfter`, from every shard at once. Fewer come back
 * when a shard's page was cut before the others': `more` says whether to go on, after `after`, so a
 * reader that does reads every account once.
 */
export async function readAccountsAfter(
  t: TableRef,
  limit: number,
  startAfter?: string,
  consistent = false,
): Promise<{ records: AccountRecord[]; more: boolean; after: string | undefined }> {
  const page = await queryShards(t, queryAccountsParams(t.tableName, limit, startAfter, consistent), limit);
  return { records: page.items.map(accountFromItem), more: page.more, after: page.after ?? startAfter };
}

/**
 * Up to `count` accounts in name order after `startAfter`, reading on while a shard's page was cut
 * before the others'. `keep` leaves accounts out (they do not count); the read ends at the first
 * account `past` is true of, which is left out too.
 */
export async function readAccountRun(
  t: TableRef,
  count: number,
  startAfter?: string,
  options: { keep?: (record: AccountRecord) => boolean; past?: (record: AccountRecord) => boolean } = {},
): Promise<AccountRecord[]> {
  const records: AccountRecord[] = [];
  let after = startAfter;
  while (records.length < count) {
    const read = await readAccountsAfter(t, count - records.length, after);
    const end = options.past === undefined ? -1 : read.records.findIndex(options.past);
    const kept = (end === -1 ? read.records : read.records.slice(0, end)).filter(options.keep ?? (() => true));
    records.push(...kept);
    if (end !== -1 || !read.more) break;
    after = read.after;
  }
  return records;
}

/**
 * Every account, in name order, a page at a time: for the driver's periodic full reconcile. It reads
 * every shard whole, so it is for background work, never for a request.
 */
export async function* allAccounts(t: TableRef, pageSize = 500, options: { consistent?: boolean } = {}): AsyncGenerator<AccountRecord[]> {
  let startAfter: string | undefined;
  for (;;) {
    const { records, more, after } = await readAccountsAfter(t, pageSize, startAfter, options.consistent);
    if (records.length > 0) yield records;
    if (!more) return;
    startAfter = after;
  }
}
