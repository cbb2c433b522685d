import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestTables } from '../../test/support/table.ts';
import { refusalOf } from '../../test/refusal.ts';
import type { Dispatch, ObjectOutcome } from '../operations/model.ts';
import type { TableRef } from './client.ts';
import { PK } from './keys.ts';
import {
  claimOperation,
  claimParams,
  compress,
  createOperation,
  deleteQueueEntry,
  endDispatch,
  finishOperation,
  finishParams,
  getOperation,
  getOperationRequest,
  isOperationId,
  newOperationId,
  openOperations,
  putIdempotencyParams,
  syncQueueEntry,
  type NewOperation,
} from './operations.ts';

const request = { action: 'scale' as const, targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 };

function input(over: Partial<NewOperation> = {}): NewOperation {
  return {
    account: 'prod',
    idempotencyKey: 'key-1',
    requestHash: 'hash-1',
    request: compress(request),
    record: { action: 'scale', objects: 1 },
    now: 1_700_000_000_000,
    ...over,
  };
}

let ids = 0;
const nextId = () => newOperationId(1_700_000_000_000 + ids++);
const dispatch = (agentId: string): Dispatch => ({ agentId, sessionId: `s-${agentId}`, replicaId: 'r1', at: 5 });

async function count(t: TableRef, pk: string): Promise<number> {
  const out = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }));
  return out.Items?.length ?? 0;
}

describe('operation builders', () => {
  it('makes ids that sort by time', () => {
    const a = newOperationId(1000, () => Buffer.alloc(8, 0xff));
    const b = newOperationId(2000, () => Buffer.alloc(8, 0));
    expect(a).toBe('0000000001000-ffffffffffffffff');
    expect(a < b).toBe(true);
    expect(isOperationId(a)).toBe(true);
    expect(isOperationId('../etc')).toBe(false);
  });

  it('claims only an open operation still at the attempt read, and finishes only an open one', () => {
    const claim = claimParams('t', 'id', 2, dispatch('a'), 9);
    expect(claim.ConditionExpression).toBe('#state IN (:queued, :running) AND attempt = :expected');
    expect(claim.ExpressionAttributeValues).toMatchObject({ ':expected': 2, ':next': 3, ':running': 'RUNNING' });
    expect(finishParams('t', 'id', { state: 'FAILED' }, 9).ConditionExpression).toBe('#state IN (:queued, :running)');
    expect(claim.UpdateExpression).toMatch(/ ADD handedTo :agent$/);
    expect(claim.ExpressionAttributeValues?.[':agent']).toEqual(new Set(['a']));
    const fromAgent = finishParams('t', 'id', { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 9);
    expect(fromAgent.ConditionExpression).toBe('#state IN (:queued, :running) AND account = :account AND (contains(handedTo, :agent) OR dispatch.agentId = :agent)');
    expect(putIdempotencyParams('t', { account: 'a', key: 'k', operationId: 'o', requestHash: 'h', createdAt: 0 }).ConditionExpression).toBe('attribute_not_exists(pk)');
  });
});

describe('operations against dynalite', () => {
  const tables = new TestTables();
  beforeAll(() => tables.start());
  afterAll(() => tables.close());

  it('creates the operation, its request, its queue entry and its key', async () => {
    const t = await tables.fresh();
    const { record, created } = await createOperation(t, input(), nextId);
    expect(created).toBe(true);
    expect(record).toMatchObject({ account: 'prod', state: 'QUEUED', attempt: 0, idempotencyKey: 'key-1', action: 'scale' });
    expect(await getOperation(t, record.id)).toEqual(record);
    expect(await getOperationRequest(t, record.id)).toEqual(request);
    expect(await openOperations(t)).toEqual([{ id: record.id, account: 'prod', state: 'QUEUED', attempt: 0, createdAt: record.createdAt }]);
    expect(await count(t, PK.operationKey)).toBe(1);
  });

  it('answers a retried request with the same operation, also when the retries race', async () => {
    const t = await tables.fresh();
    const first = await createOperation(t, input(), nextId);
    const again = await createOperation(t, input({ now: input().now + 5000 }), nextId);
    expect(again).toEqual({ record: first.record, created: false });
    const racing = await Promise.all(Array.from({ length: 10 }, () => createOperation(t, input({ idempotencyKey: 'key-2' }), nextId)));
    expect(new Set(racing.map((r) => r.record.id)).size).toBe(1);
    expect(racing.filter((r) => r.created)).toHaveLength(1);
    expect(await count(t, PK.operation)).toBe(2);
    expect(await count(t, PK.operationQueue)).toBe(2);
  });

  it('refuses the same key with another request, naming the operation it stands for', async () => {
    const t = await tables.fresh();
    const first = await createOperation(t, input(), nextId);
    const err = await refusalOf(createOperation(t, input({ requestHash: 'hash-2' }), nextId));
    expect(err.code).toBe('conflict');
    expect(err.details).toEqual({ operationId: first.record.id });
    expect(await count(t, PK.operation)).toBe(1);
    // Keys belong to an account: another account may use the same one.
    expect((await createOperation(t, input({ account: 'stage', requestHash: 'hash-2' }), nextId)).created).toBe(true);
  });

  it('finishes what a crashed request started: a claimed key without its operation, an operation without its queue entry', async () => {
    const t = await tables.fresh();
    await t.client.send(new PutCommand(putIdempotencyParams(t.tableName, { account: 'prod', key: 'key-1', operationId: 'crashed-id', requestHash: 'hash-1', createdAt: 1 })));
    const { record, created } = await createOperation(t, input(), nextId);
    expect(created).toBe(true);
    expect(record.id).toBe('crashed-id');
    await deleteQueueEntry(t, record.id);
    expect(await openOperations(t)).toEqual([]);
    await createOperation(t, input(), nextId);
    expect((await openOperations(t)).map((e) => e.id)).toEqual([record.id]);
  });

  it('hands out once per attempt, and again only from the attempt read', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input(), nextId);
    const claims = await Promise.all([claimOperation(t, record.id, 0, dispatch('a'), 10), claimOperation(t, record.id, 0, dispatch('b'), 10)]);
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ state: 'RUNNING', attempt: 1, dispatchedAt: 10 });
    expect(await endDispatch(t, record.id, 2, 11, 'gone')).toBeUndefined();
    expect((await endDispatch(t, record.id, 1, 11, 'stream ended'))?.dispatch).toMatchObject({ endedAt: 11, endReason: 'stream ended' });
    const again = await claimOperation(t, record.id, 1, dispatch('c'), 12);
    expect(again).toMatchObject({ attempt: 2, dispatch: { agentId: 'c' } });
    expect(again?.dispatch?.endedAt).toBeUndefined();
    await syncQueueEntry(t, again!);
    expect(await openOperations(t)).toEqual([expect.objectContaining({ state: 'RUNNING', attempt: 2, dispatch: dispatch('c') })]);
  });

  it('takes a result only from an agent the operation was handed to, at any attempt', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input(), nextId);
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 10)).toBeUndefined();
    await claimOperation(t, record.id, 0, dispatch('a'), 11);
    await endDispatch(t, record.id, 1, 12, 'stream ended');
    const again = await claimOperation(t, record.id, 1, dispatch('b'), 13);
    expect(again?.handedTo).toEqual(['a', 'b']);
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'prod', agentId: 'stranger' }, 14)).toBeUndefined();
    expect((await getOperation(t, record.id))?.state).toBe('RUNNING');
    // The agent of the earlier attempt answers first: its result wins.
    expect(await finishOperation(t, record.id, { state: 'FAILED', account: 'prod', agentId: 'a' }, 15)).toMatchObject({ state: 'FAILED', handedTo: ['a', 'b'] });
  });

  it('moves states forward only: the first finish wins and nothing reopens a finished operation', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input(), nextId);
    await claimOperation(t, record.id, 0, dispatch('a'), 10);
    const outcomes: ObjectOutcome[] = [{ index: 0, apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', result: 'scaled', code: 200 }];
    const report = { agentId: 'a', attempt: 1, startedAt: 11, finishedAt: 12, budgetWaitMs: 0 };
    const done = await finishOperation(t, record.id, { state: 'SUCCEEDED', outcomes, report }, 13);
    expect(done).toMatchObject({ state: 'SUCCEEDED', finishedAt: 13, outcomes, report });
    expect(await finishOperation(t, record.id, { state: 'TIMED_OUT', message: 'late' }, 14)).toBeUndefined();
    expect(await claimOperation(t, record.id, 1, dispatch('b'), 15)).toBeUndefined();
    expect(await endDispatch(t, record.id, 1, 16, 'late')).toBeUndefined();
    expect(await getOperation(t, record.id)).toEqual(done);
    // Outcomes are stored compressed.
    const raw = await t.client.send(new GetCommand({ TableName: t.tableName, Key: { pk: PK.operation, sk: record.id } }));
    expect(raw.Item?.outcomes).toBeInstanceOf(Uint8Array);
    // A finished operation's queue entry is not brought back by a late sync.
    await deleteQueueEntry(t, record.id);
    await syncQueueEntry(t, done!);
    expect(await openOperations(t)).toEqual([]);
  });
});
