import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { refusalOf } from '../../../test/refusal.ts';
import { interceptedTable, operationOf, refusingOnce } from '../../../test/support/intercepted-table.ts';
import { keysOverEveryShard } from '../../../test/support/sharded-items.ts';
import { useTestTables } from '../../../test/support/table.ts';
import { queueEntryOf, type Dispatch, type ObjectOutcomeRecord as ObjectOutcome, type OperationRecord } from '../../operations/model.ts';
import type { TableRef } from '../core/client.ts';
import { PK_PREFIX } from '../core/keys.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { sweepExpiredItems } from '../core/ttl-sweep.ts';
import { listAccountOperations } from './by-account.ts';
import { OPERATION_PARTITIONS, OPERATION_QUEUE_PARTITIONS, OPERATION_REQUEST_PARTITIONS, accountOperationKey, operationKey, operationQueueKey } from './keys.ts';
import {
  claimOperation,
  claimParams,
  compress,
  decompress,
  createOperation,
  deleteFinishedQueueEntry,
  deleteQueueEntry,
  endDispatch,
  finishOperation,
  finishParams,
  createOperationParams,
  getOperation,
  getOperationWithRequest,
  INLINE_REQUEST_BYTES,
  MAX_INLINE_REQUEST_JSON_BYTES,
  isOperationId,
  newOperationRecord,
  openOperations,
  operationIdOf,
  OPERATION_RETENTION_MS,
  syncQueueEntry,
  type NewOperation,
} from './operations.ts';

const request = { action: 'scale' as const, targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 };

function input(over: Partial<NewOperation> = {}): NewOperation {
  return {
    account: 'prod',
    submittedBy: 'oidc:alice',
    idempotencyKey: 'key-1',
    requestHash: 'hash-1',
    request: compress(request),
    record: { action: 'scale', objects: 1 },
    now: 1_700_000_000_000,
    ...over,
  };
}

const dispatch = (agentId: string): Dispatch => ({ agentId, sessionId: `s-${agentId}`, replicaId: 'r1', at: 5 });

/** The items of every partition of one kind (the shards of the operations, their requests or their queue). */
async function count(t: TableRef, pks: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    pks.map(async (pk) => {
      const out = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }));
      return out.Items?.length ?? 0;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

describe('operation builders', () => {
  it('decompresses within a bound when given one, and refuses what would pass it', () => {
    const bomb = compress('0'.repeat(2 * 1024 * 1024));
    expect(() => decompress(bomb, 1024 * 1024)).toThrow(RangeError);
    expect(decompress<string>(bomb)).toHaveLength(2 * 1024 * 1024);
    expect(decompress<string>(bomb, MAX_INLINE_REQUEST_JSON_BYTES)).toHaveLength(2 * 1024 * 1024);
  });

  it('derives the id from the account, the caller and the key alone', () => {
    const id = operationIdOf('prod', 'oidc:alice', 'key-1');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(operationIdOf('prod', 'oidc:alice', 'key-1')).toBe(id);
    expect(operationIdOf('stage', 'oidc:alice', 'key-1')).not.toBe(id);
    expect(operationIdOf('prod', 'oidc:alice', 'key-2')).not.toBe(id);
    expect(operationIdOf('prod', 'oidc:bob', 'key-1')).not.toBe(id);
    // The separators keep the parts apart: ("ab", "c") is not ("a", "bc").
    expect(operationIdOf('ab', 'x', 'c')).not.toBe(operationIdOf('a', 'x', 'bc'));
    expect(operationIdOf('a', 'xb', 'c')).not.toBe(operationIdOf('a', 'x', 'bc'));
    expect(isOperationId(id)).toBe(true);
    expect(isOperationId('../etc')).toBe(false);
    expect(isOperationId(id.toUpperCase())).toBe(false);
  });

  it('creates an operation only where its id stands for none, queued or already handed out', () => {
    const queued = newOperationRecord(input());
    expect(queued).toMatchObject({ id: operationIdOf('prod', 'oidc:alice', 'key-1'), state: 'QUEUED', attempt: 0 });
    expect(queued.dispatch).toBeUndefined();
    const handedOut = newOperationRecord(input({ dispatch: dispatch('a') }));
    expect(handedOut).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: dispatch('a'), dispatchedAt: input().now });
    expect(createOperationParams('t', queued).ConditionExpression).toBe('attribute_not_exists(pk)');
  });

  it('claims only an open operation still at the attempt read, and finishes only an open one', () => {
    const claim = claimParams('t', 'id', 2, dispatch('a'), 9);
    expect(claim.ConditionExpression).toBe('#state IN (:queued, :running) AND attempt = :expected');
    const ofAccount = claimParams('t', 'id', 0, dispatch('a'), 9, 'prod');
    expect(ofAccount.ConditionExpression).toBe('#state IN (:queued, :running) AND attempt = :expected AND account = :account');
    expect(ofAccount.ExpressionAttributeValues?.[':account']).toBe('prod');
    expect(claim.ExpressionAttributeValues).toMatchObject({ ':expected': 2, ':next': 3, ':running': 'RUNNING' });
    expect(finishParams('t', 'id', { state: 'FAILED' }, 9).ConditionExpression).toBe('#state IN (:queued, :running)');
    expect(claim.UpdateExpression).toMatch(/ ADD handedTo :agent$/);
    expect(claim.ExpressionAttributeValues?.[':agent']).toEqual(new Set(['a']));
    const fromAgent = finishParams('t', 'id', { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 9);
    expect(fromAgent.ConditionExpression).toBe('#state IN (:queued, :running) AND account = :account AND contains(handedTo, :agent)');
    const legacy = finishParams('t', 'id', { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 9, true);
    expect(legacy.ConditionExpression).toBe('#state IN (:queued, :running) AND account = :account AND attribute_not_exists(handedTo) AND dispatch.agentId = :agent');
  });
});

describe('operations against dynalite', () => {
  const tables = useTestTables();

  it('creates the operation with its request inside and its queue entry, and nothing else', async () => {
    const t = await tables.fresh();
    const { record, created } = await createOperation(t, input());
    expect(created).toBe(true);
    expect(record).toMatchObject({ id: operationIdOf('prod', 'oidc:alice', 'key-1'), account: 'prod', state: 'QUEUED', attempt: 0, idempotencyKey: 'key-1', action: 'scale' });
    expect(await getOperation(t, record.id)).toEqual(record);
    expect((await getOperationWithRequest(t, record.id))?.request).toEqual(request);
    expect(await openOperations(t)).toEqual([{ id: record.id, account: 'prod', state: 'QUEUED', attempt: 0, createdAt: record.createdAt }]);
    expect(await count(t, OPERATION_REQUEST_PARTITIONS)).toBe(0);
  });

  it('keeps a request too large for the operation item in an item of its own, keyed by its hash', async () => {
    const t = await tables.fresh();
    const big = { action: 'deploy' as const, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' }, data: { blob: randomBytes(INLINE_REQUEST_BYTES).toString('base64') } }], forceConflicts: false };
    const { record } = await createOperation(t, input({ request: compress(big), record: { action: 'deploy', objects: 1 } }));
    expect((await getOperationWithRequest(t, record.id))?.request).toEqual(big);
    expect(await count(t, OPERATION_REQUEST_PARTITIONS)).toBe(1);
    const raw = await t.client.send(new GetCommand({ TableName: t.tableName, Key: operationKey(record.id) }));
    expect(raw.Item?.request).toBeUndefined();
    // Another request racing for the same key writes its own request item, never over this one.
    const other = { ...big, forceConflicts: true };
    await refusalOf(createOperation(t, input({ requestHash: 'hash-2', request: compress(other), record: { action: 'deploy', objects: 1 } })));
    expect((await getOperationWithRequest(t, record.id))?.request).toEqual(big);
  });

  it('stores an operation handed out at creation with its hand-out, in the operation and in its queue entry', async () => {
    const t = await tables.fresh();
    const { record, created } = await createOperation(t, input({ dispatch: dispatch('a') }));
    expect(created).toBe(true);
    expect(await getOperation(t, record.id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: dispatch('a') });
    expect(await openOperations(t)).toEqual([expect.objectContaining({ state: 'RUNNING', attempt: 1, dispatch: dispatch('a') })]);
    // The next hand-out claims from attempt 1.
    expect(await claimOperation(t, record.id, 0, dispatch('b'), 10)).toBeUndefined();
    expect(await claimOperation(t, record.id, 1, dispatch('b'), 10)).toMatchObject({ attempt: 2, dispatch: dispatch('b') });
  });

  it('says an operation is stored once its own put has won, while its entries are still on their way', async () => {
    const t = await tables.fresh();
    let letEntriesGo!: () => void;
    const entriesHeld = new Promise<void>((resolve) => (letEntriesGo = resolve));
    const held = interceptedTable(t, async (command, send) => {
      if (operationOf(command) === 'BatchWrite') await entriesHeld;
      return send(command);
    });
    const told: OperationRecord[] = [];
    let answered = false;
    const creating = createOperation(held, input({ dispatch: dispatch('a') }), (r) => told.push(r)).finally(() => (answered = true));
    await vi.waitFor(() => expect(told).toHaveLength(1), { timeout: 10_000 });
    // The item stands and the agent may be sent it; its queue entry is not written yet, nor answered.
    expect(await getOperation(t, told[0]!.id)).toEqual(told[0]);
    expect(await openOperations(t)).toEqual([]);
    expect(answered).toBe(false);
    letEntriesGo();
    expect(await creating).toEqual({ record: told[0], created: true });
    expect(await openOperations(t)).toEqual([queueEntryOf(told[0]!)]);
    // A request whose put loses (the key stands for an operation) is told nothing.
    const again: OperationRecord[] = [];
    expect((await createOperation(t, input({ dispatch: dispatch('b') }), (r) => again.push(r))).created).toBe(false);
    expect(again).toEqual([]);
  });

  it('tells of the won put also when the entries\' write then fails, and fails', async () => {
    const t = await tables.fresh();
    const entries = refusingOnce('BatchWrite');
    entries.arm();
    const told: OperationRecord[] = [];
    await expect(createOperation(entries.table(t), input({ dispatch: dispatch('a') }), (r) => told.push(r))).rejects.toThrow('the table failed');
    // The operation stands, and was told of: it goes to its agent, whose result is written to it.
    expect(told).toHaveLength(1);
    expect(await getOperation(t, told[0]!.id)).toEqual(told[0]);
    // A retry with the same key answers it, and brings its queue entry back.
    expect(await createOperation(t, input())).toEqual({ record: told[0], created: false });
    expect(await openOperations(t)).toEqual([queueEntryOf(told[0]!)]);
  });

  it('answers a retried request with the same operation, also when the retries race', async () => {
    const t = await tables.fresh();
    const first = await createOperation(t, input());
    const again = await createOperation(t, input({ now: input().now + 5000 }));
    expect(again).toEqual({ record: first.record, created: false });
    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => createOperation(t, input({ idempotencyKey: 'key-2', now: input().now + i, ...(i % 2 === 0 ? { dispatch: dispatch(`agent-${i}`) } : {}) }))));
    expect(new Set(racing.map((r) => r.record.id)).size).toBe(1);
    expect(racing.filter((r) => r.created)).toHaveLength(1);
    expect(await count(t, OPERATION_PARTITIONS)).toBe(2);
    expect(await count(t, OPERATION_QUEUE_PARTITIONS)).toBe(2);
    // The queue entry is the winner's, whichever request put it.
    const winner = racing.find((r) => r.created)!.record;
    expect((await openOperations(t)).find((e) => e.id === winner.id)).toEqual(queueEntryOf(winner));
  });

  it('refuses the same key with another request, naming the operation it stands for', async () => {
    const t = await tables.fresh();
    const first = await createOperation(t, input());
    const err = await refusalOf(createOperation(t, input({ requestHash: 'hash-2' })));
    expect(err.code).toBe('conflict');
    expect(err.details).toEqual({ operationId: first.record.id });
    expect(await count(t, OPERATION_PARTITIONS)).toBe(1);
    // Keys belong to an account: another account may use the same one.
    expect((await createOperation(t, input({ account: 'stage', requestHash: 'hash-2' }))).created).toBe(true);
  });

  it('stores a new operation in two requests: its conditional put, and its queue and account entries in one batch', async () => {
    const t = await tables.fresh();
    const sent: string[] = [];
    t.client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'countStoreRequests' },
    );
    try {
      await createOperation(t, input());
    } finally {
      t.client.middlewareStack.remove('countStoreRequests');
    }
    expect(sent.sort()).toEqual(['BatchWriteItemCommand', 'PutItemCommand']);
    expect(await count(t, OPERATION_QUEUE_PARTITIONS)).toBe(1);
    expect((await listAccountOperations(t, 'prod', { limit: 10 })).records.map((r) => r.id)).toEqual([operationIdOf('prod', 'oidc:alice', 'key-1')]);
  });

  it('leaves the queue entry as its operation says after a retry, whatever the retry put over it', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
    const claimed = await claimOperation(t, record.id, 0, dispatch('a'), 11);
    await syncQueueEntry(t, claimed!);
    // A retry later: its own copy (QUEUED, attempt 0, its own time) is put over the entry, then made the operation's again.
    expect((await createOperation(t, input({ now: input().now + 5000 }))).created).toBe(false);
    expect(await openOperations(t)).toEqual([queueEntryOf(claimed!)]);
    expect(claimed?.createdAt).toBe(record.createdAt);
  });

  it('puts back the entries of an unfinished operation that has none when its queue entry is brought in step, never those of a finished one', async () => {
    const t = await tables.fresh();
    const big = { action: 'deploy' as const, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' }, data: { blob: randomBytes(INLINE_REQUEST_BYTES).toString('base64') } }], forceConflicts: false };
    const small = (await createOperation(t, input({ dispatch: dispatch('a') }))).record;
    const large = (await createOperation(t, input({ idempotencyKey: 'key-2', request: compress(big), record: { action: 'deploy', objects: 1 } }))).record;
    const withoutEntries = async (id: string, createdAt: number) => {
      await deleteQueueEntry(t, id);
      await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: accountOperationKey('prod', createdAt, id) }));
    };
    await withoutEntries(small.id, small.createdAt);
    await withoutEntries(large.id, large.createdAt);
    expect(await openOperations(t)).toEqual([]);
    await syncQueueEntry(t, small);
    await syncQueueEntry(t, large);
    // As the store writes them: the entry of a request stored apart names its hash, for the claim to read it.
    expect(await openOperations(t)).toEqual([queueEntryOf(small), { ...queueEntryOf(large), requestHash: large.requestHash }]);
    expect((await listAccountOperations(t, 'prod', { limit: 10 })).records.map((r) => r.id).sort()).toEqual([small.id, large.id].sort());
    // Finished, its entry deleted: a late step brings nothing back.
    await finishOperation(t, small.id, { state: 'SUCCEEDED' }, 20);
    await deleteQueueEntry(t, small.id);
    await syncQueueEntry(t, small);
    expect(await openOperations(t)).toEqual([{ ...queueEntryOf(large), requestHash: large.requestHash }]);
  });

  it('deletes a finished operation\'s queue entry, and writes its place in the account\'s list only when there was no entry', async () => {
    const t = await tables.fresh();
    const sent: string[] = [];
    const recorded = interceptedTable(t, (command, send) => (sent.push(operationOf(command)), send(command)));
    const whole = (await createOperation(t, input())).record;
    await deleteFinishedQueueEntry(recorded, whole);
    expect(sent).toEqual(['Delete']);
    const bare = (await createOperation(t, input({ idempotencyKey: 'key-2' }))).record;
    await deleteQueueEntry(t, bare.id);
    await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: accountOperationKey('prod', bare.createdAt, bare.id) }));
    sent.length = 0;
    await deleteFinishedQueueEntry(recorded, bare);
    expect(sent).toEqual(['Delete', 'Put']);
    expect((await listAccountOperations(t, 'prod', { limit: 10 })).records.map((r) => r.id).sort()).toEqual([whole.id, bare.id].sort());
    expect(await openOperations(t)).toEqual([]);
  });

  it('finishes what a crashed request started: an operation without its queue entry gets it back, a finished one does not', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
    await deleteQueueEntry(t, record.id);
    expect(await openOperations(t)).toEqual([]);
    await createOperation(t, input());
    expect(await openOperations(t)).toEqual([queueEntryOf(record)]);
    await finishOperation(t, record.id, { state: 'SUCCEEDED' }, 20);
    await deleteQueueEntry(t, record.id);
    expect((await createOperation(t, input())).created).toBe(false);
    expect(await openOperations(t)).toEqual([]);
  });

  it('reads the queue oldest first, across every queue partition and whatever the operations\' shards', async () => {
    const t = await tables.fresh();
    const ordered = keysOverEveryShard('prod', 'oidc:alice', 2);
    expect(ordered).toHaveLength(2 * OPERATION_PARTITIONS.length);
    const made = [];
    for (const [i, key] of ordered.entries()) made.push((await createOperation(t, input({ idempotencyKey: key, now: 1000 + i }))).record.id);
    for (const pk of OPERATION_PARTITIONS) expect(await count(t, [pk])).toBe(2);
    for (const pk of OPERATION_QUEUE_PARTITIONS) expect(await count(t, [pk])).toBe(made.length / OPERATION_QUEUE_PARTITIONS.length);
    expect((await openOperations(t)).map((e) => e.id)).toEqual(made);
  });

  it('hands out once per attempt, and again only from the attempt read', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
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
    const { record } = await createOperation(t, input());
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

  it('takes the result of an operation claimed before handedTo was kept from its dispatch agent only', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
    await claimOperation(t, record.id, 0, dispatch('a'), 11);
    // As an earlier version left it: the agent named in `dispatch` alone.
    await t.client.send(new UpdateCommand({ TableName: t.tableName, Key: operationKey(record.id), UpdateExpression: 'REMOVE handedTo' }));
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'prod', agentId: 'stranger' }, 12)).toBeUndefined();
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'other', agentId: 'a' }, 12)).toBeUndefined();
    expect((await getOperation(t, record.id))?.state).toBe('RUNNING');
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 13)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('knows the agent of an operation stored already handed out', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input({ dispatch: dispatch('a') }));
    expect(record.handedTo).toEqual(['a']);
    await endDispatch(t, record.id, 1, 12, 'stream ended');
    expect((await claimOperation(t, record.id, 1, dispatch('b'), 13))?.handedTo).toEqual(['a', 'b']);
    expect(await finishOperation(t, record.id, { state: 'SUCCEEDED', account: 'prod', agentId: 'a' }, 14)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('moves states forward only: the first finish wins and nothing reopens a finished operation', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
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
    const raw = await t.client.send(new GetCommand({ TableName: t.tableName, Key: operationKey(record.id) }));
    expect(raw.Item?.outcomes).toBeInstanceOf(Uint8Array);
    // A finished operation's queue entry is not brought back by a late sync.
    await deleteQueueEntry(t, record.id);
    await syncQueueEntry(t, done!);
    expect(await openOperations(t)).toEqual([]);
  });

  it('expires whole at the end of its retention: the operation, its large request, its queue entry and its account entry go together', async () => {
    const t = await tables.fresh();
    // Random bytes do not compress: the request gets an item of its own.
    const { record } = await createOperation(t, input({ request: randomBytes(INLINE_REQUEST_BYTES + 1) }));
    const partitions = [OPERATION_PARTITIONS, OPERATION_REQUEST_PARTITIONS, OPERATION_QUEUE_PARTITIONS, [`${PK_PREFIX.operationByAccount}prod`]];
    const left = async () => Promise.all(partitions.map((pk) => count(t, pk)));
    expect(await left()).toEqual([1, 1, 1, 1]);
    expect(await sweepExpiredItems(t, record.createdAt + OPERATION_RETENTION_MS - 1000)).toBe(0);
    expect(await left()).toEqual([1, 1, 1, 1]);
    expect(await sweepExpiredItems(t, record.createdAt + OPERATION_RETENTION_MS + 1000)).toBe(4);
    expect(await left()).toEqual([0, 0, 0, 0]);
  });

  it('gives a queue entry stored without an expiry the expiry of its operation when it is brought in line', async () => {
    const t = await tables.fresh();
    const { record } = await createOperation(t, input());
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...operationQueueKey(record.id), ...queueEntryOf(record) } }));
    await syncQueueEntry(t, record);
    const raw = await t.client.send(new GetCommand({ TableName: t.tableName, Key: operationQueueKey(record.id), ConsistentRead: true }));
    expect(raw.Item?.[TTL_ATTRIBUTE]).toBe(Math.ceil((record.createdAt + OPERATION_RETENTION_MS) / 1000));
    expect(await openOperations(t)).toEqual([queueEntryOf(record)]);
  });
});
