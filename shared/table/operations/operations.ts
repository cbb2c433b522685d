/**
 * Deployment operations in the table (docs/table.md, "Operations"). Three kinds of item, the first
 * two spread over `OPERATION_SHARDS` partitions by the id's shard (keys.ts):
 *
 * - the operation (`OPERATION#<shard>` / id): state, hand-out, report and outcomes, and the request
 *   itself when it is small (gzip-compressed). Its id is a hash of the account and the
 *   Idempotency-Key, so the one conditional put that creates it is also what makes a key stand for one
 *   operation. Every state change is one conditional update, so states only move forward and two
 *   writers never both win;
 * - a request too large to keep in the operation (`OPREQUEST#<shard>` / `<id>#<requestHash>`), written
 *   once before the operation, so the operation item that is updated several times stays small (an
 *   update costs the item's size);
 * - its queue entry (`OPQUEUE#0` / id: `OPERATION_QUEUE_SHARDS` partitions, one) while it is not
 *   finished: the few fields dispatch decides from, so a driver replica finds open work with one Query
 *   of each small queue partition. The
 *   operation item is the truth; the entry is a copy that a writer repairs when it finds it stale.
 */
import { createHash } from 'node:crypto';
import { compress, decompress } from '../core/compressed.ts';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type BatchWriteCommandInput,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { VendorError, type ErrorCode } from '../../errors.ts';
import type { AgentReport, Dispatch, ObjectOutcomeRecord as ObjectOutcome, OperationRecord, OperationState, QueueEntry } from '../../operations/model.ts';
import { isFinished, queueEntryOf } from '../../operations/model.ts';
import type { OperationRequest } from '../../operations/request.ts';
import type { TableRef } from '../core/client.ts';
import { batchWrite } from '../core/batch.ts';
import { tryConditional, updateIfCondition } from '../core/conditional.ts';
import { queryAllShards } from '../core/sharded-query.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { OPERATION_QUEUE_PARTITIONS, accountOperationKey, operationKey, operationQueueKey, operationRequestKey } from './keys.ts';
import { putAccountOperationParams } from './account-entries.ts';

// Callers compress an operation's request with these (one definition for every compressed value).
export { compress, decompress };

/** Operations and their requests are kept this long (TTL where the table has it); so is what a key stands for. */
export const OPERATION_RETENTION_MS = 30 * 24 * 3600 * 1000;

/**
 * A compressed request up to this size is kept in the operation item itself: one write creates both,
 * and a hand-out needs no read. Larger ones get an item of their own, so the updates of the operation
 * (hand-out, result), which cost its size, stay at a few WCU.
 */
export const INLINE_REQUEST_BYTES = 4096;

/** Whether a compressed request is stored in an item of its own, apart from its operation. */
export function storedApart(request: Uint8Array): boolean {
  return request.length > INLINE_REQUEST_BYTES;
}

/**
 * The id of the operation an Idempotency-Key stands for, for one caller in one account: 32 hex digits,
 * the first 128 bits of SHA-256 over the three. Every API process and every retry derives the same id,
 * so the conditional put of the operation decides alone whether the key is new; another caller's same
 * key is another operation, so no caller can take (or learn of) the keys of another.
 */
export function operationIdOf(account: string, caller: string, key: string): string {
  return createHash('sha256').update(`${account}\u0000${caller}\u0000${key}`).digest('hex').slice(0, 32);
}

const OPERATION_ID = /^[0-9a-f]{32}$/;

export function isOperationId(value: string): boolean {
  return OPERATION_ID.test(value);
}

function expiresAt(now: number): number {
  return Math.ceil((now + OPERATION_RETENTION_MS) / 1000);
}

/**
 * What an inline request can ever become once decompressed: deflate packs at most 1,032 bytes into
 * one, so a request the API keeps inline is never larger. A reader of a request from outside the
 * table passes it to `decompress` as its bound.
 */
export const MAX_INLINE_REQUEST_JSON_BYTES = INLINE_REQUEST_BYTES * 1032;


// ---- pure builders ----

/** A request too large to keep inline; the same id and hash always carry the same request, so a plain put is idempotent. */
export function putRequestParams(tableName: string, id: string, requestHash: string, request: Uint8Array, now: number): PutCommandInput {
  return { TableName: tableName, Item: { ...operationRequestKey(id, requestHash), id, request, [TTL_ATTRIBUTE]: expiresAt(now) } };
}

export function getRequestParams(tableName: string, id: string, requestHash: string): GetCommandInput {
  return { TableName: tableName, Key: operationRequestKey(id, requestHash), ConsistentRead: true };
}

function toItem(record: OperationRecord, request: Uint8Array | undefined): Record<string, unknown> {
  const { outcomes, handedTo, ...rest } = record;
  return {
    ...operationKey(record.id),
    ...rest,
    // A string set, so that each claim can add its agent (`ADD`).
    ...(handedTo === undefined || handedTo.length === 0 ? {} : { handedTo: new Set(handedTo) }),
    ...(outcomes === undefined ? {} : { outcomes: compress(outcomes) }),
    ...(request === undefined ? {} : { request }),
    [TTL_ATTRIBUTE]: expiresAt(record.createdAt),
  };
}

/** The operation item as stored: the record, and the request when it is kept inline. */
interface StoredOperation {
  record: OperationRecord;
  request: Uint8Array | undefined;
}

/** The operation record of an operation item (without the request). */
export function operationFromItem(item: Record<string, unknown>): OperationRecord {
  return fromItem(item).record;
}

function fromItem(item: Record<string, unknown>): StoredOperation {
  const { pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _ttl, outcomes, request, handedTo, ...rest } = item;
  const record = rest as unknown as OperationRecord;
  if (handedTo instanceof Set) record.handedTo = [...(handedTo as Set<string>)].sort();
  return {
    record: outcomes instanceof Uint8Array ? { ...record, outcomes: decompress<ObjectOutcome[]>(outcomes) } : record,
    request: request instanceof Uint8Array ? request : undefined,
  };
}

/** Creates the operation unless its id (its account and key) already stands for one. */
export function createOperationParams(tableName: string, record: OperationRecord, inlineRequest?: Uint8Array): PutCommandInput {
  return { TableName: tableName, Item: toItem(record, inlineRequest), ConditionExpression: 'attribute_not_exists(pk)' };
}

export function getOperationParams(tableName: string, id: string, consistent = true): GetCommandInput {
  return { TableName: tableName, Key: operationKey(id), ConsistentRead: consistent };
}

/** A queue entry expires with its operation, so that none outlives it (one whose finish never removed it, say). */
export function queueEntryItem(entry: QueueEntry): Record<string, unknown> {
  return { ...operationQueueKey(entry.id), ...entry, [TTL_ATTRIBUTE]: expiresAt(entry.createdAt) };
}

/**
 * The two entries a new operation gets beside its own item, its queue entry and its account's list
 * entry, as one BatchWriteItem of plain puts: one request to the table rather than two, sent beside
 * the operation's conditional put. Plain puts may replace an entry a request with the same key wrote
 * first; `createOperation` then rewrites it from the operation that stands.
 */
export function createEntriesParams(tableName: string, entry: QueueEntry, record: Pick<OperationRecord, 'id' | 'account' | 'createdAt'>): BatchWriteCommandInput {
  return {
    RequestItems: {
      [tableName]: [{ PutRequest: { Item: queueEntryItem(entry) } }, { PutRequest: { Item: putAccountOperationParams(tableName, record, expiresAt(record.createdAt)).Item } }],
    },
  };
}

/** Brings an existing entry in line with its operation, its expiry too; never brings a deleted entry back. */
export function syncQueueEntryParams(tableName: string, entry: QueueEntry): UpdateCommandInput {
  const set = `SET #state = :state, attempt = :attempt, #ttl = :ttl${entry.dispatch === undefined ? '' : ', dispatch = :dispatch'}`;
  return {
    TableName: tableName,
    Key: operationQueueKey(entry.id),
    UpdateExpression: entry.dispatch === undefined ? `${set} REMOVE dispatch` : set,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#state': 'state', '#ttl': TTL_ATTRIBUTE },
    ExpressionAttributeValues: {
      ':state': entry.state,
      ':attempt': entry.attempt,
      ':ttl': expiresAt(entry.createdAt),
      ...(entry.dispatch === undefined ? {} : { ':dispatch': entry.dispatch }),
    },
  };
}

export function deleteQueueEntryParams(tableName: string, id: string): DeleteCommandInput {
  return { TableName: tableName, Key: operationQueueKey(id) };
}

/** Every open operation: one Query per queue partition. Strongly consistent: a replica must not miss a fresh one. */
export function openOperationsParams(tableName: string): QueryCommandInput[] {
  return OPERATION_QUEUE_PARTITIONS.map((pk) => ({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ConsistentRead: true,
  }));
}

/**
 * Hands the operation to an agent: QUEUED or RUNNING → RUNNING with the next attempt, only if it is
 * still at `expectedAttempt` (nobody else handed it out meanwhile) and not finished; with `account`,
 * only if it is of that account (a claim named by a wake, which the replica does not trust).
 */
export function claimParams(tableName: string, id: string, expectedAttempt: number, dispatch: Dispatch, now: number, account?: string): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: operationKey(id),
    UpdateExpression: 'SET #state = :running, attempt = :next, dispatch = :dispatch, dispatchedAt = :now, updatedAt = :now ADD handedTo :agent',
    ConditionExpression: `#state IN (:queued, :running) AND attempt = :expected${account === undefined ? '' : ' AND account = :account'}`,
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ...(account === undefined ? {} : { ':account': account }),
      ':running': 'RUNNING',
      ':queued': 'QUEUED',
      ':next': expectedAttempt + 1,
      ':expected': expectedAttempt,
      ':dispatch': dispatch,
      ':agent': new Set([dispatch.agentId]),
      ':now': now,
    },
    ReturnValues: 'ALL_NEW',
  };
}

/** The stream attempt `attempt` went out on ended before its result: the operation may go out again. */
export function endDispatchParams(tableName: string, id: string, attempt: number, endedAt: number, reason: string): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: operationKey(id),
    UpdateExpression: 'SET dispatch.endedAt = :at, dispatch.endReason = :reason, updatedAt = :at',
    ConditionExpression: '#state = :running AND attempt = :attempt',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':running': 'RUNNING', ':attempt': attempt, ':at': endedAt, ':reason': reason.slice(0, 1024) },
    ReturnValues: 'ALL_NEW',
  };
}

export interface Finish {
  state: Extract<OperationState, 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT'>;
  /** When given, the operation must be of this account (a result names the account it ran on). */
  account?: string;
  /** When given, the operation must have been handed to this agent (a result is only taken from one). */
  agentId?: string;
  message?: string;
  /** Only for a failure of the operation as a whole (a refusal, an unsent request, the timeout). */
  errorCode?: ErrorCode;
  report?: AgentReport;
  outcomes?: readonly ObjectOutcome[];
}

/** Ends an open operation. The first finish wins; one for a finished operation fails its condition. */
/**
 * `byDispatch`: the agent is tested by `dispatch.agentId` instead of `handedTo`, for an operation
 * claimed before `handedTo` was kept (`finishOperation` tries it only after the usual test failed).
 * The two tests are two writes rather than one OR: the embedded table's expression parser takes
 * several times as long over a parenthesised OR, on the write every result makes.
 */
export function finishParams(tableName: string, id: string, finish: Finish, now: number, byDispatch = false): UpdateCommandInput {
  const set = ['#state = :state', 'finishedAt = :now', 'updatedAt = :now'];
  const values: Record<string, unknown> = { ':state': finish.state, ':now': now, ':queued': 'QUEUED', ':running': 'RUNNING' };
  if (finish.message !== undefined) {
    set.push('message = :message');
    values[':message'] = finish.message;
  }
  if (finish.errorCode !== undefined) {
    set.push('errorCode = :errorCode');
    values[':errorCode'] = finish.errorCode;
  }
  if (finish.report !== undefined) {
    set.push('report = :report');
    values[':report'] = finish.report;
  }
  if (finish.outcomes !== undefined) {
    set.push('outcomes = :outcomes');
    values[':outcomes'] = compress(finish.outcomes);
  }
  const condition = ['#state IN (:queued, :running)'];
  if (finish.account !== undefined) {
    values[':account'] = finish.account;
    condition.push('account = :account');
  }
  if (finish.agentId !== undefined) {
    values[':agent'] = finish.agentId;
    condition.push(byDispatch ? 'attribute_not_exists(handedTo) AND dispatch.agentId = :agent' : 'contains(handedTo, :agent)');
  }
  return {
    TableName: tableName,
    Key: operationKey(id),
    UpdateExpression: `SET ${set.join(', ')}`,
    ConditionExpression: condition.join(' AND '),
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  };
}

// ---- sends ----

export async function getOperation(t: TableRef, id: string, consistent = true): Promise<OperationRecord | undefined> {
  const out = await t.client.send(new GetCommand(getOperationParams(t.tableName, id, consistent)));
  return out.Item === undefined ? undefined : fromItem(out.Item).record;
}

/** A request stored apart from its operation, or undefined when its item is missing. */
async function requestApart(t: TableRef, id: string, requestHash: string): Promise<OperationRequest | undefined> {
  const out = await t.client.send(new GetCommand(getRequestParams(t.tableName, id, requestHash)));
  const bytes = out.Item?.request;
  return bytes instanceof Uint8Array ? decompress<OperationRequest>(bytes) : undefined;
}

async function requestOf(t: TableRef, stored: StoredOperation): Promise<OperationRequest | undefined> {
  if (stored.request !== undefined) return decompress<OperationRequest>(stored.request);
  return requestApart(t, stored.record.id, stored.record.requestHash);
}

/** The operation with its request (undefined when its own item is missing), or undefined when there is no such operation. */
export async function getOperationWithRequest(t: TableRef, id: string): Promise<{ record: OperationRecord; request: OperationRequest | undefined } | undefined> {
  const out = await t.client.send(new GetCommand(getOperationParams(t.tableName, id)));
  if (out.Item === undefined) return undefined;
  const stored = fromItem(out.Item);
  return { record: stored.record, request: await requestOf(t, stored) };
}

export interface NewOperation {
  account: string;
  /** Who submits it (`callerScope`): its Idempotency-Key is its own. */
  submittedBy: string;
  idempotencyKey: string;
  requestHash: string;
  /** The request, compressed (`compress()`), as stored. */
  request: Uint8Array;
  record: Omit<OperationRecord, 'id' | 'account' | 'submittedBy' | 'idempotencyKey' | 'requestHash' | 'state' | 'attempt' | 'createdAt' | 'updatedAt' | 'dispatch' | 'handedTo' | 'dispatchedAt'>;
  now: number;
  /**
   * When given, the operation is stored already handed out to this agent (RUNNING, attempt 1): the
   * replica that stores it has a stream to an agent holding the account and sends it right after.
   */
  dispatch?: Dispatch | undefined;
}

/** The record an operation is created with. */
export function newOperationRecord(input: NewOperation): OperationRecord {
  const { account, submittedBy, idempotencyKey, requestHash, now, dispatch } = input;
  const id = operationIdOf(account, submittedBy, idempotencyKey);
  const base = { ...input.record, id, account, submittedBy, idempotencyKey, requestHash, createdAt: now, updatedAt: now };
  return dispatch === undefined ? { ...base, state: 'QUEUED', attempt: 0 } : { ...base, state: 'RUNNING', attempt: 1, dispatch, handedTo: [dispatch.agentId], dispatchedAt: now };
}

/**
 * The queue entry of `record` as stored: the entry of a request stored apart (not `inline` in the
 * operation item) names its hash, so that the claim reads the request alongside (claimWithRequest).
 */
function storedEntryOf(record: OperationRecord, inline: boolean): QueueEntry {
  return inline ? queueEntryOf(record) : { ...queueEntryOf(record), requestHash: record.requestHash };
}

/**
 * Creates an operation once per idempotency key, in one round trip: the operation item (id derived
 * from account and key, `attribute_not_exists`), its queue entry and its entry in the account's list
 * (account-entries.ts) go out together; a request too
 * large to keep inline is written first. When the id already stands for an operation, that one is
 * answered (`created: false`) if it came with the same request, and its queue entry brought in line
 * (a crash may have left it missing; this request may just have put a stale copy); another request
 * is a `conflict`. An entry whose operation never came (the operation's put failed) is dropped by
 * dispatch.
 *
 * `stored` is called as soon as the operation's own put has won, before its entries are known to be
 * written, and also when their write then fails: an operation stored handed out goes to its agent
 * then (docs/operations.md#handed-out-at-creation). The item is the operation; an entry that lands
 * after its result's delete is dropped by dispatch as stale.
 */
export async function createOperation(
  t: TableRef,
  input: NewOperation,
  stored?: (record: OperationRecord) => void,
): Promise<{ record: OperationRecord; created: boolean }> {
  const record = newOperationRecord(input);
  const inline = !storedApart(input.request);
  if (!inline) await t.client.send(new PutCommand(putRequestParams(t.tableName, record.id, record.requestHash, input.request, input.now)));
  const put = tryConditional(() => t.client.send(new PutCommand(createOperationParams(t.tableName, record, inline ? input.request : undefined)))).then((won) => {
    if (won) stored?.(record);
    return won;
  });
  // Both settle before either's failure is answered: a put that won is told of even when the entries failed first.
  const [putDone, entriesDone] = await Promise.allSettled([put, batchWrite(t, createEntriesParams(t.tableName, storedEntryOf(record, inline), record))]);
  if (putDone.status === 'rejected') throw putDone.reason;
  if (entriesDone.status === 'rejected') throw entriesDone.reason;
  const created = putDone.value;
  if (created) return { record, created: true };
  const found = await getOperation(t, record.id);
  if (found === undefined) throw new VendorError('precondition_failed', 'the operation changed concurrently; retry');
  if (found.requestHash !== record.requestHash || found.account !== record.account || found.submittedBy !== record.submittedBy || found.idempotencyKey !== record.idempotencyKey) {
    throw new VendorError('conflict', `Idempotency-Key "${input.idempotencyKey}" was already used for a different request (operation ${found.id}); use a new key for a new request`, {
      details: { operationId: found.id },
    });
  }
  // The queue entry this request put is a copy of a record that was never stored, over whatever entry
  // stood: make it the operation's (its time, attempt and hand-out), or drop it; never bring back one
  // deleted since (the operation finished meanwhile). An entry that lags meanwhile is what dispatch is
  // made for: it decides from the operation's conditional writes.
  if (isFinished(found.state)) await deleteQueueEntry(t, found.id);
  else await tryConditional(() => t.client.send(new PutCommand({ TableName: t.tableName, Item: queueEntryItem(storedEntryOf(found, inline)), ConditionExpression: 'attribute_exists(pk)' })));
  // This request's account entry carries its own time: replace it with the operation's (which a first
  // request that stopped early may not have written). A list skips an entry whose time is not its operation's.
  if (found.createdAt !== record.createdAt) {
    await Promise.all([
      t.client.send(new DeleteCommand({ TableName: t.tableName, Key: accountOperationKey(record.account, record.createdAt, record.id) })),
      t.client.send(new PutCommand(putAccountOperationParams(t.tableName, found, expiresAt(found.createdAt)))),
    ]);
  }
  return { record: found, created: false };
}

/**
 * Every open operation of every queue partition (read together), oldest first: ids are hashes, so the
 * partitions' order is not time order.
 */
export async function openOperations(t: TableRef): Promise<QueueEntry[]> {
  const items = await queryAllShards(t, openOperationsParams(t.tableName));
  return items
    .map(({ pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _ttl, ...entry }) => entry as unknown as QueueEntry)
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The operation as handed out, or undefined when another writer got there first. */
export async function claimOperation(t: TableRef, id: string, expectedAttempt: number, dispatch: Dispatch, now: number): Promise<OperationRecord | undefined> {
  return (await claimWithRequest(t, id, expectedAttempt, dispatch, now))?.record;
}

/**
 * Claims the operation (as `claimOperation`) and, when `withRequest`, answers its request too: from
 * the item the claim returns when the request is inline, else read from its own item. A claimed
 * operation whose request is not there (it cannot be: it is written before the operation) answers
 * `request: undefined`. `requestHash` (a queue entry's, for a request stored apart) has that item
 * read alongside the claim instead of after it: the item never changes, and it is written before
 * the operation, so the read finds what a read after the claim would. `account`: the claim holds
 * only for an operation of that account.
 */
export async function claimWithRequest(
  t: TableRef,
  id: string,
  expectedAttempt: number,
  dispatch: Dispatch,
  now: number,
  withRequest = true,
  requestHash?: string,
  account?: string,
): Promise<{ record: OperationRecord; request: OperationRequest | undefined } | undefined> {
  const early = withRequest && requestHash !== undefined ? requestApart(t, id, requestHash) : undefined;
  // A claim that loses leaves the early read unused: its failure is nobody's.
  early?.catch(() => undefined);
  const item = await updateIfCondition(t, claimParams(t.tableName, id, expectedAttempt, dispatch, now, account));
  if (item === undefined) return undefined;
  const stored = fromItem(item);
  if (!withRequest) return { record: stored.record, request: undefined };
  const apart = stored.request === undefined && early !== undefined && stored.record.requestHash === requestHash;
  return { record: stored.record, request: apart ? await early.catch(() => requestOf(t, stored)) : await requestOf(t, stored) };
}

export async function endDispatch(t: TableRef, id: string, attempt: number, endedAt: number, reason: string): Promise<OperationRecord | undefined> {
  const item = await updateIfCondition(t, endDispatchParams(t.tableName, id, attempt, endedAt, reason));
  return item === undefined ? undefined : fromItem(item).record;
}

/** The finished operation, or undefined when it had already finished (or does not exist). */
export async function finishOperation(t: TableRef, id: string, finish: Finish, now: number): Promise<OperationRecord | undefined> {
  const item = await updateIfCondition(t, finishParams(t.tableName, id, finish, now));
  if (item !== undefined) return fromItem(item).record;
  if (finish.agentId === undefined) return undefined;
  // Operations claimed before `handedTo` was kept name their agent only in `dispatch`.
  const legacy = await updateIfCondition(t, finishParams(t.tableName, id, finish, now, true));
  return legacy === undefined ? undefined : fromItem(legacy).record;
}

/**
 * Brings the operation's queue entry in step with `record`. An entry that is missing while the
 * operation is unfinished is put back, with the operation's entry in its account's list: the store's
 * write of them failed while the operation's put won, and without its queue entry no pass would find
 * the operation again, nor time it out (docs/operations.md#handed-out-at-creation). An entry the
 * operation's finish deleted stays deleted; one that finish deletes just after it was put back is
 * dropped by the next pass, which reads the operation finished.
 */
export async function syncQueueEntry(t: TableRef, record: OperationRecord): Promise<void> {
  if (await tryConditional(() => t.client.send(new UpdateCommand(syncQueueEntryParams(t.tableName, queueEntryOf(record)))))) return;
  const item = (await t.client.send(new GetCommand(getOperationParams(t.tableName, record.id)))).Item;
  if (item === undefined) return;
  const current = fromItem(item);
  if (isFinished(current.record.state)) return;
  await batchWrite(t, createEntriesParams(t.tableName, storedEntryOf(current.record, current.request !== undefined), current.record));
}

export async function deleteQueueEntry(t: TableRef, id: string): Promise<void> {
  await t.client.send(new DeleteCommand(deleteQueueEntryParams(t.tableName, id)));
}

/**
 * Deletes the queue entry of `record`, which just finished, and when there was none (the store's
 * write of its entries failed while its put won, or is still on its way) puts its entry in its
 * account's list, so that it is listed all the same. The delete names what it removed at no cost.
 */
export async function deleteFinishedQueueEntry(t: TableRef, record: OperationRecord): Promise<void> {
  const removed = await t.client.send(new DeleteCommand({ ...deleteQueueEntryParams(t.tableName, record.id), ReturnValues: 'ALL_OLD' }));
  if (removed.Attributes !== undefined) return;
  await t.client.send(new PutCommand(putAccountOperationParams(t.tableName, record, expiresAt(record.createdAt))));
}
