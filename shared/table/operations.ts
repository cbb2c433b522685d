/**
 * Deployment operations in the table (docs/table.md, "Operations"). Four kinds of item:
 *
 * - the operation (`OPERATION` / id): state, hand-out, report and outcomes. Every state change is one
 *   conditional update, so states only move forward and two writers never both win;
 * - its request (`OPREQUEST` / id): the manifests or targets, gzip-compressed, written once, so the
 *   operation item that is updated several times stays small (an update costs the item's size);
 * - its queue entry (`OPQUEUE` / id) while it is not finished: the few fields dispatch decides from,
 *   so a driver replica finds open work with one Query of a small partition. The operation item is
 *   the truth; the entry is a copy that a writer repairs when it finds it stale;
 * - the idempotency key (`OPKEY` / `<account>#<key>`): the operation id a key stands for, and the hash
 *   of the request it came with.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { VendorError } from '../errors.ts';
import type { AgentReport, Dispatch, ObjectOutcome, OperationRecord, OperationState, QueueEntry } from '../operations/model.ts';
import { queueEntryOf } from '../operations/model.ts';
import type { OperationRequest } from '../operations/request.ts';
import type { TableRef } from './client.ts';
import { tryConditional, updateIfCondition } from './conditional.ts';
import { PK, idempotencyKeyKey, operationKey, operationQueueKey, operationRequestKey, padMs } from './keys.ts';
import { queryAll } from './query.ts';
import { TTL_ATTRIBUTE } from './schema.ts';

/** Operations, their requests and idempotency keys are kept this long (TTL where the table has it). */
export const OPERATION_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Ids sort by creation time, so the queue reads oldest first: `<13-digit ms>-<16 hex>`. */
export function newOperationId(now: number, random: () => Buffer = () => randomBytes(8)): string {
  return `${padMs(now)}-${random().toString('hex')}`;
}

const OPERATION_ID = /^\d{13}-[0-9a-f]{16}$/;

export function isOperationId(value: string): boolean {
  return OPERATION_ID.test(value);
}

function expiresAt(now: number): number {
  return Math.ceil((now + OPERATION_RETENTION_MS) / 1000);
}

export function compress(value: unknown): Uint8Array {
  return gzipSync(JSON.stringify(value));
}

export function decompress<T>(bytes: Uint8Array): T {
  return JSON.parse(gunzipSync(bytes).toString('utf8')) as T;
}

export interface IdempotencyEntry {
  account: string;
  key: string;
  operationId: string;
  requestHash: string;
  createdAt: number;
}

// ---- pure builders ----

export function putIdempotencyParams(tableName: string, entry: IdempotencyEntry): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...idempotencyKeyKey(entry.account, entry.key), ...entry, [TTL_ATTRIBUTE]: expiresAt(entry.createdAt) },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

export function getIdempotencyParams(tableName: string, account: string, key: string): GetCommandInput {
  return { TableName: tableName, Key: idempotencyKeyKey(account, key), ConsistentRead: true };
}

/** The request of an operation; the same id always carries the same request, so a plain put is idempotent. */
export function putRequestParams(tableName: string, id: string, request: Uint8Array, now: number): PutCommandInput {
  return { TableName: tableName, Item: { ...operationRequestKey(id), id, request, [TTL_ATTRIBUTE]: expiresAt(now) } };
}

export function getRequestParams(tableName: string, id: string): GetCommandInput {
  return { TableName: tableName, Key: operationRequestKey(id), ConsistentRead: true };
}

function toItem(record: OperationRecord): Record<string, unknown> {
  const { outcomes, ...rest } = record;
  return { ...operationKey(record.id), ...rest, ...(outcomes === undefined ? {} : { outcomes: compress(outcomes) }), [TTL_ATTRIBUTE]: expiresAt(record.createdAt) };
}

function fromItem(item: Record<string, unknown>): OperationRecord {
  const { pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _ttl, outcomes, handedTo, ...rest } = item;
  const record = rest as unknown as OperationRecord;
  if (handedTo instanceof Set) record.handedTo = [...(handedTo as Set<string>)].sort();
  return outcomes instanceof Uint8Array ? { ...record, outcomes: decompress<ObjectOutcome[]>(outcomes) } : record;
}

export function createOperationParams(tableName: string, record: OperationRecord): PutCommandInput {
  return { TableName: tableName, Item: toItem(record), ConditionExpression: 'attribute_not_exists(pk)' };
}

export function getOperationParams(tableName: string, id: string, consistent = true): GetCommandInput {
  return { TableName: tableName, Key: operationKey(id), ConsistentRead: consistent };
}

export function createQueueEntryParams(tableName: string, entry: QueueEntry): PutCommandInput {
  return { TableName: tableName, Item: { ...operationQueueKey(entry.id), ...entry }, ConditionExpression: 'attribute_not_exists(pk)' };
}

/** Brings an existing entry in line with its operation; never brings a deleted entry back. */
export function syncQueueEntryParams(tableName: string, entry: QueueEntry): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: operationQueueKey(entry.id),
    UpdateExpression: entry.dispatch === undefined ? 'SET #state = :state, attempt = :attempt REMOVE dispatch' : 'SET #state = :state, attempt = :attempt, dispatch = :dispatch',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':state': entry.state, ':attempt': entry.attempt, ...(entry.dispatch === undefined ? {} : { ':dispatch': entry.dispatch }) },
  };
}

export function deleteQueueEntryParams(tableName: string, id: string): DeleteCommandInput {
  return { TableName: tableName, Key: operationQueueKey(id) };
}

/** Every open operation, oldest first. Strongly consistent: a replica must not miss a fresh one. */
export function openOperationsParams(tableName: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': PK.operationQueue },
    ConsistentRead: true,
  };
}

/**
 * Hands the operation to an agent: QUEUED or RUNNING → RUNNING with the next attempt, only if it is
 * still at `expectedAttempt` (nobody else handed it out meanwhile) and not finished.
 */
export function claimParams(tableName: string, id: string, expectedAttempt: number, dispatch: Dispatch, now: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: operationKey(id),
    UpdateExpression: 'SET #state = :running, attempt = :next, dispatch = :dispatch, dispatchedAt = :now, updatedAt = :now ADD handedTo :agent',
    ConditionExpression: '#state IN (:queued, :running) AND attempt = :expected',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
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
  report?: AgentReport;
  outcomes?: readonly ObjectOutcome[];
}

/** Ends an open operation. The first finish wins; one for a finished operation fails its condition. */
export function finishParams(tableName: string, id: string, finish: Finish, now: number): UpdateCommandInput {
  const set = ['#state = :state', 'finishedAt = :now', 'updatedAt = :now'];
  const values: Record<string, unknown> = { ':state': finish.state, ':now': now, ':queued': 'QUEUED', ':running': 'RUNNING' };
  if (finish.message !== undefined) {
    set.push('message = :message');
    values[':message'] = finish.message;
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
    // Operations claimed before `handedTo` was kept name their agent only in `dispatch`.
    condition.push('(contains(handedTo, :agent) OR dispatch.agentId = :agent)');
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
  return out.Item === undefined ? undefined : fromItem(out.Item);
}

export async function getOperationRequest(t: TableRef, id: string): Promise<OperationRequest | undefined> {
  const out = await t.client.send(new GetCommand(getRequestParams(t.tableName, id)));
  const bytes = out.Item?.request;
  return bytes instanceof Uint8Array ? decompress<OperationRequest>(bytes) : undefined;
}

export interface NewOperation {
  account: string;
  idempotencyKey: string;
  requestHash: string;
  /** The request, compressed (`compress()`), as stored. */
  request: Uint8Array;
  record: Omit<OperationRecord, 'id' | 'account' | 'idempotencyKey' | 'requestHash' | 'state' | 'attempt' | 'createdAt' | 'updatedAt'>;
  now: number;
}

/**
 * Creates an operation once per idempotency key. The key is claimed first (a conditional put), so
 * concurrent or retried requests with the same key agree on one id; then the request, the operation
 * and its queue entry are written together, each idempotently, so a retry finishes what a crashed
 * attempt started. Dispatch copes with an entry whose operation or request is not there yet. The same
 * key with another request is a `conflict`.
 */
export async function createOperation(t: TableRef, input: NewOperation, newId: () => string): Promise<{ record: OperationRecord; created: boolean }> {
  const { account, idempotencyKey: key, requestHash, now } = input;
  let id = newId();
  const claimed = await tryConditional(() =>
    t.client.send(new PutCommand(putIdempotencyParams(t.tableName, { account, key, operationId: id, requestHash, createdAt: now }))),
  );
  if (!claimed) {
    const existing = (await t.client.send(new GetCommand(getIdempotencyParams(t.tableName, account, key)))).Item as IdempotencyEntry | undefined;
    if (existing === undefined) throw new VendorError('precondition_failed', 'the idempotency key changed concurrently; retry');
    if (existing.requestHash !== requestHash) {
      throw new VendorError('conflict', `Idempotency-Key "${key}" was already used for a different request (operation ${existing.operationId}); use a new key for a new request`, {
        details: { operationId: existing.operationId },
      });
    }
    id = existing.operationId;
    const found = await getOperation(t, id);
    if (found !== undefined) {
      // A crash after the operation but before its queue entry would leave it undispatched for ever.
      if (found.state === 'QUEUED') await putQueueEntry(t, found);
      return { record: found, created: false };
    }
  }
  const record: OperationRecord = { ...input.record, id, account, idempotencyKey: key, requestHash, state: 'QUEUED', attempt: 0, createdAt: now, updatedAt: now };
  const [, created] = await Promise.all([
    t.client.send(new PutCommand(putRequestParams(t.tableName, id, input.request, now))),
    tryConditional(() => t.client.send(new PutCommand(createOperationParams(t.tableName, record)))),
    putQueueEntry(t, record),
  ]);
  if (created) return { record, created: true };
  // A concurrent request with the same key and request wrote it first.
  const found = await getOperation(t, id);
  if (found === undefined) throw new VendorError('precondition_failed', 'the operation changed concurrently; retry');
  return { record: found, created: false };
}

async function putQueueEntry(t: TableRef, record: OperationRecord): Promise<void> {
  await tryConditional(() => t.client.send(new PutCommand(createQueueEntryParams(t.tableName, queueEntryOf(record)))));
}

export async function openOperations(t: TableRef): Promise<QueueEntry[]> {
  const items = await queryAll(t, openOperationsParams(t.tableName));
  return items.map(({ pk: _pk, sk: _sk, ...entry }) => entry as unknown as QueueEntry);
}

/** The operation as handed out, or undefined when another writer got there first. */
export async function claimOperation(t: TableRef, id: string, expectedAttempt: number, dispatch: Dispatch, now: number): Promise<OperationRecord | undefined> {
  const item = await updateIfCondition(t, claimParams(t.tableName, id, expectedAttempt, dispatch, now));
  return item === undefined ? undefined : fromItem(item);
}

export async function endDispatch(t: TableRef, id: string, attempt: number, endedAt: number, reason: string): Promise<OperationRecord | undefined> {
  const item = await updateIfCondition(t, endDispatchParams(t.tableName, id, attempt, endedAt, reason));
  return item === undefined ? undefined : fromItem(item);
}

/** The finished operation, or undefined when it had already finished (or does not exist). */
export async function finishOperation(t: TableRef, id: string, finish: Finish, now: number): Promise<OperationRecord | undefined> {
  const item = await updateIfCondition(t, finishParams(t.tableName, id, finish, now));
  return item === undefined ? undefined : fromItem(item);
}

export async function syncQueueEntry(t: TableRef, record: OperationRecord): Promise<void> {
  await tryConditional(() => t.client.send(new UpdateCommand(syncQueueEntryParams(t.tableName, queueEntryOf(record)))));
}

export async function deleteQueueEntry(t: TableRef, id: string): Promise<void> {
  await t.client.send(new DeleteCommand(deleteQueueEntryParams(t.tableName, id)));
}
