import { randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../../test/capture-log.ts';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { OperationEvents } from '../../shared/operations/events.ts';
import { queueEntryOf, type OperationRecord } from '../../shared/operations/model.ts';
import type { OperationRequest } from '../../shared/operations/request.ts';
import type { DriverBody, Operation, OperationResult__Output } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import {
  claimOperation,
  compress,
  createOperation,
  getOperation,
  openOperations,
  operationIdOf,
  queueEntryItem,
  syncQueueEntry,
} from '../../shared/table/operations/operations.ts';
import { operationsSectionEntries, type OperationsConfig } from './config.ts';
import type { AgentDirectory, LocalAgent } from './directory.ts';
import { ENTRY_SYNC_AFTER_MS, OperationDispatcher, boundedOutcomes } from './dispatcher.ts';
import { createDriverMetrics, type DriverMetrics } from '../metrics/metrics.ts';
import { interceptedTable, refusingOnce } from '../../test/support/intercepted-table.ts';
import { listAccountOperations } from '../../shared/table/operations/by-account.ts';
import { OPERATION_QUEUE_PARTITIONS, isOperationQueuePartition, isOperationRequestPartition, operationQueueKey, operationRequestKey } from '../../shared/table/operations/keys.ts';
import { keysOverEveryShard } from '../../test/support/sharded-items.ts';

const tables = useTestTables();

/** An agent's stream as the dispatcher sees it: records what it is sent; delivery succeeds unless told. */
class StreamDouble implements LocalAgent {
  readonly sent: Operation[] = [];
  fail: Error | undefined;
  readonly agentId: string;
  readonly id: string;
  accounts: readonly string[];
  constructor(agentId: string, id = `session-${agentId}`, accounts = ['prod']) {
    this.agentId = agentId;
    this.id = id;
    this.accounts = accounts;
  }
  closed = false;
  async send(out: DriverBody): Promise<void> {
    if (out.kind === 'operation') this.sent.push(out.body);
    if (this.fail !== undefined) {
      // A send fails because the stream ended.
      this.closed = true;
      throw this.fail;
    }
  }
}

class Directory implements AgentDirectory {
  agents: StreamDouble[] = [];
  live = new Set<string>();
  holders(account: string): readonly LocalAgent[] {
    return this.agents.filter((a) => !a.closed && a.accounts.includes(account));
  }
  isOpen(sessionId: string): boolean {
    return this.agents.some((a) => !a.closed && a.id === sessionId);
  }
  async liveSessionIds(): Promise<ReadonlySet<string>> {
    return this.live;
  }
}

type CommandInput = { Key?: { pk?: unknown; sk?: unknown }; UpdateExpression?: string };

const isClaim = (input: CommandInput) => input.UpdateExpression?.includes('dispatchedAt') === true;

/** The table, with the requests `holds` picks held until released; every request is recorded as it is made. */
function holdingTable(base: TableRef, holds: (input: CommandInput) => boolean) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const made: CommandInput[] = [];
  const table = interceptedTable(base, async (command, send) => {
    made.push(command.input as CommandInput);
    if (holds(command.input as CommandInput)) {
      reach();
      await released;
    }
    return send(command);
  });
  // Released at the end whatever happens, so the dispatcher can stop.
  running.push(async () => release());
  return { table, reached, release, made };
}

const request: OperationRequest = { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 2 };
const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function setup(config: Partial<OperationsConfig> = {}, table?: TableRef, metrics?: DriverMetrics) {
  const t = table ?? (await tables.fresh());
  const clock = new ManualClock(1_700_000_000_000);
  const events = new OperationEvents();
  const directory = new Directory();
  const logs = captureLogger();
  const finished: OperationRecord[] = [];
  const dispatcher = new OperationDispatcher({
    table: t,
    clock,
    log: logs.log,
    replicaId: 'replica-1',
    directory,
    config: v.parse(operationsSectionEntries.operations, { pollIntervalMs: 1000, redispatchAfterMs: 5000, orphanAfterMs: 60_000, timeoutMs: 600_000, ...config }),
    events,
    metrics,
  });
  const stop = new AbortController();
  const loop = dispatcher.run(stop.signal);
  running.push(async () => {
    stop.abort();
    await loop;
  });
  let keys = 0;
  return {
    table: t,
    clock,
    events,
    directory,
    dispatcher,
    logs,
    finished,
    async create(over: { timeoutMs?: number; account?: string } = {}) {
      const { record } = await createOperation(t, {
        account: over.account ?? 'prod',
        submittedBy: 'oidc:alice',
        idempotencyKey: `k${keys++}`,
        requestHash: 'h',
        request: compress(request),
        record: { action: 'scale', objects: 1, ...(over.timeoutMs === undefined ? {} : { timeoutMs: over.timeoutMs }) },
        now: clock.now(),
      });
      return record;
    },
    /** Lets the dispatcher's loop do what is due now. */
    async settle() {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 30));
    },
  };
}

const result = (op: Operation, ok = true, over: Partial<OperationResult__Output> = {}): OperationResult__Output => ({
  operationId: op.operationId as string,
  account: op.account as string,
  attempt: op.attempt as number,
  ok,
  message: ok ? '1 object done' : '1 of 1 failed, 0 skipped',
  errorCode: '',
  outcomes: [{ index: 0, object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }, result: ok ? 'scaled' : 'failed', message: '', code: 200, reason: '', resourceVersion: '9', generation: 2 }],
  startedAtMs: 1,
  finishedAtMs: 2,
  budgetWaitMs: 0,
  ...over,
});

/**
 * Stores an operation handed out through a reservation of `s`'s dispatcher as the API does, but with
 * its entries' write refused after its put won, and the request never retried: its id.
 */
async function storedWithoutEntries(s: Awaited<ReturnType<typeof setup>>, key: string): Promise<string> {
  const id = operationIdOf('prod', 'oidc:alice', key);
  const reservation = s.events.reserve(id, 'prod', s.clock.now())!;
  const entries = refusingOnce('BatchWrite');
  entries.arm();
  const input = { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: 'h', request: compress(request), record: { action: 'scale' as const, objects: 1 }, now: s.clock.now(), dispatch: reservation.dispatch };
  await expect(createOperation(entries.table(s.table), input, (op) => reservation.handOut({ record: op, request }))).rejects.toThrow('the table failed');
  return id;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

describe('operation dispatcher', () => {
  it('hands out the operations of every queue partition, oldest first', async () => {
    const s = await setup({ concurrency: 1 });
    const agent = new StreamDouble('agent-1');
    const made: string[] = [];
    for (const key of keysOverEveryShard('prod', 'oidc:alice', 2)) {
      const { record } = await createOperation(s.table, { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: 'h', request: compress(request), record: { action: 'scale', objects: 1 }, now: s.clock.now() });
      made.push(record.id);
      await s.clock.advance(1);
    }
    expect(new Set(made.map((id) => operationQueueKey(id).pk))).toEqual(new Set(OPERATION_QUEUE_PARTITIONS));
    s.directory.agents = [agent];
    s.dispatcher.wake();
    await until(() => agent.sent.length === made.length);
    expect(agent.sent.map((op) => op.operationId)).toEqual(made);
    for (const id of made) expect(await getOperation(s.table, id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'agent-1' } });
  });

  it('hands a just-stored operation to a holder at once, and records its result', async () => {
    const s = await setup();
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const op = await s.create();
    const waiting = s.events.waitFinished(op.id, new AbortController().signal);
    s.events.queued({ record: op, request });
    await until(() => agent.sent.length === 1);
    expect(agent.sent[0]).toMatchObject({ operationId: op.id, account: 'prod', attempt: 1, scale: { replicas: 2 } });
    expect(await getOperation(s.table, op.id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'agent-1', replicaId: 'replica-1' } });
    expect(await s.dispatcher.recordResult('agent-1', result(agent.sent[0]!))).toBe('recorded');
    expect((await waiting)?.state).toBe('SUCCEEDED');
    expect(await getOperation(s.table, op.id)).toMatchObject({ state: 'SUCCEEDED', outcomes: [{ result: 'scaled', generation: 2 }], report: { agentId: 'agent-1', attempt: 1 } });
    await until(async () => (await openOperations(s.table)).length === 0);
    // The first result wins; a duplicate changes nothing.
    expect(await s.dispatcher.recordResult('agent-1', result(agent.sent[0]!, false))).toBe('ignored');
    expect((await getOperation(s.table, op.id))?.state).toBe('SUCCEEDED');
  });

  it('reads the queue again at once for a wake that comes while an earlier hand-out is still being claimed', async () => {
    let held: string | undefined;
    const h = holdingTable(await tables.fresh(), (input) => input.Key?.sk === held && isClaim(input));
    const s = await setup({}, h.table);
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const first = await s.create();
    held = first.id;
    s.dispatcher.wake();
    await h.reached;
    const second = await s.create();
    s.dispatcher.wake();
    // The second goes out while the first's claim is still on its way.
    await until(() => agent.sent.some((o) => o.operationId === second.id));
    expect(agent.sent.map((o) => o.operationId)).toEqual([second.id]);
    h.release();
    await until(() => agent.sent.length === 2);
    expect(agent.sent.map((o) => o.operationId)).toEqual([second.id, first.id]);
    expect(await getOperation(s.table, first.id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  });

  it('writes the queue entry of a claim that finishes within ENTRY_SYNC_AFTER_MS only to delete it', async () => {
    const h = holdingTable(await tables.fresh(), () => false);
    const s = await setup({}, h.table);
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const op = await s.create();
    s.dispatcher.wake();
    await until(() => agent.sent.length === 1);
    // A read of the queue meanwhile finds the entry as the API wrote it, and leaves the operation alone.
    await s.clock.advance(ENTRY_SYNC_AFTER_MS - 1);
    s.dispatcher.wake();
    await s.settle();
    expect(await openOperations(s.table)).toMatchObject([{ id: op.id, state: 'QUEUED', attempt: 0 }]);
    expect(agent.sent).toHaveLength(1);
    expect(await s.dispatcher.recordResult('agent-1', result(agent.sent[0]!))).toBe('recorded');
    await until(async () => (await openOperations(s.table)).length === 0);
    await s.clock.advance(ENTRY_SYNC_AFTER_MS);
    await s.settle();
    const entryWrites = h.made.filter((input) => isOperationQueuePartition(input.Key?.pk));
    // The delete alone: no update in step with the claim, and one claim only.
    expect(entryWrites).toHaveLength(1);
    expect(entryWrites[0]?.UpdateExpression).toBeUndefined();
    expect(h.made.filter(isClaim)).toHaveLength(1);
  });

  it('brings the queue entry in step with a claim still running after ENTRY_SYNC_AFTER_MS, or at once when it stops', async () => {
    const s = await setup();
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const op = await s.create();
    s.dispatcher.wake();
    await until(() => agent.sent.length === 1);
    await s.clock.advance(ENTRY_SYNC_AFTER_MS);
    await until(async () => (await openOperations(s.table))[0]?.attempt === 1);
    expect((await openOperations(s.table))[0]).toMatchObject({ id: op.id, state: 'RUNNING', dispatch: { agentId: 'agent-1', replicaId: 'replica-1' } });

    const second = await s.create();
    s.dispatcher.wake();
    await until(() => agent.sent.length === 2);
    // Stopping does not leave the entry behind its operation, nor wait for the deferral.
    for (const stop of running.splice(0)) await stop();
    expect((await openOperations(s.table)).find((e) => e.id === second.id)).toMatchObject({ state: 'RUNNING', attempt: 1 });
  });

  it('reads a request stored apart from its operation alongside the claim, not after it', async () => {
    const h = holdingTable(await tables.fresh(), isClaim);
    const s = await setup({}, h.table);
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    // Random text does not compress: the request is too large to keep inline.
    const manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'shop' }, data: { blob: randomBytes(6000).toString('base64') } };
    const big: OperationRequest = { action: 'deploy', manifests: [manifest], forceConflicts: false };
    const { record: op } = await createOperation(s.table, {
      account: 'prod',
      submittedBy: 'oidc:alice',
      idempotencyKey: 'big',
      requestHash: 'hb',
      request: compress(big),
      record: { action: 'deploy', objects: 1 },
      now: s.clock.now(),
    });
    expect((await openOperations(s.table))[0]).toMatchObject({ id: op.id, requestHash: 'hb' });
    s.dispatcher.wake();
    await h.reached;
    // While the claim is held, the request's own item is read already.
    await until(() => h.made.some((input) => isOperationRequestPartition(input.Key?.pk)));
    expect(agent.sent).toEqual([]);
    h.release();
    await until(() => agent.sent.length === 1);
    expect(agent.sent[0]).toMatchObject({ operationId: op.id, attempt: 1, deploy: { manifests: [JSON.stringify(manifest)] } });
    // One read of the request, no second one after the claim.
    expect(h.made.filter((input) => isOperationRequestPartition(input.Key?.pk))).toHaveLength(1);
  });

  it('counts what it does in the driver metrics: open operations by state, hand-outs, ends with their duration from creation', async () => {
    const metrics = createDriverMetrics();
    const s = await setup({}, undefined, metrics);
    const sample = async (series: string) => (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1];
    const op = await s.create();
    // No agent holds the account yet: the next read of the queue finds it queued.
    s.dispatcher.wake();
    await until(async () => (await sample('vendor_driver_operations_open{state="QUEUED"}')) === '1');
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    s.dispatcher.wake();
    await until(() => agent.sent.length === 1);
    expect(await sample('vendor_driver_operations_handed_out_total')).toBe('1');
    await s.clock.advance(2_500);
    expect(await s.dispatcher.recordResult('agent-1', result(agent.sent[0]!, false))).toBe('recorded');
    expect(await sample('vendor_driver_operations_finished_total{state="FAILED"}')).toBe('1');
    expect(await sample('vendor_driver_operation_duration_seconds_sum{state="FAILED"}')).toBe('2.5');
    expect((await getOperation(s.table, op.id))?.state).toBe('FAILED');
  });

  it('sets an agent aside for an operation the API stores handed out to it, and sends it without a claim of its own', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const id = operationIdOf('prod', 'oidc:alice', 'reserved');
    const reservation = s.events.reserve(id, 'prod', s.clock.now());
    expect(reservation?.dispatch).toEqual({ agentId: 'a', sessionId: a.id, replicaId: 'replica-1', at: s.clock.now() });
    // A concurrent request with the same key gets no agent: it finds the operation stored.
    expect(s.events.reserve(id, 'prod', s.clock.now())).toBeUndefined();
    expect(s.events.reserve(operationIdOf('stage', 'oidc:alice', 'x'), 'stage', s.clock.now())).toBeUndefined();
    const { record, created } = await createOperation(s.table, { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: 'reserved', requestHash: 'h', request: compress(request), record: { action: 'scale', objects: 1 }, now: s.clock.now(), dispatch: reservation!.dispatch });
    expect(created).toBe(true);
    reservation!.handOut({ record, request });
    expect(a.sent).toEqual([expect.objectContaining({ operationId: id, attempt: 1, scale: expect.objectContaining({ replicas: 2 }) })]);
    // A retry with its key gets no agent while it is in hand: its release would make this replica forget the send.
    expect(s.events.reserve(id, 'prod', s.clock.now())).toBeUndefined();
    // Passes leave it alone: it is in hand, at the attempt it was stored with.
    s.dispatcher.wake();
    await s.settle();
    await s.clock.advance(1000);
    await s.settle();
    expect(a.sent).toHaveLength(1);
    expect(await getOperation(s.table, id)).toMatchObject({ state: 'RUNNING', attempt: 1, dispatch: { agentId: 'a' } });
    expect(await s.dispatcher.recordResult('a', result(a.sent[0]!))).toBe('recorded');
    await until(async () => (await openOperations(s.table)).length === 0);
  });

  it('sends an operation stored handed out once its put wins, and drops its queue entry should it land after the result', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const id = operationIdOf('prod', 'oidc:alice', 'late-entry');
    const reservation = s.events.reserve(id, 'prod', s.clock.now())!;
    const input = { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: 'late-entry', requestHash: 'h', request: compress(request), record: { action: 'scale' as const, objects: 1 }, now: s.clock.now(), dispatch: reservation.dispatch };
    const { record } = await createOperation(s.table, input, (op) => reservation.handOut({ record: op, request }));
    expect(a.sent).toEqual([expect.objectContaining({ operationId: id, attempt: 1 })]);
    expect(await s.dispatcher.recordResult('a', result(a.sent[0]!))).toBe('recorded');
    await until(async () => (await openOperations(s.table)).length === 0);
    // The store's write of the entries, late: its queue entry still says RUNNING here, on an open stream.
    await s.table.client.send(new PutCommand({ TableName: s.table.tableName, Item: queueEntryItem(queueEntryOf(record)) }));
    s.dispatcher.wake();
    await until(async () => (await openOperations(s.table)).length === 0);
    await s.settle();
    expect(a.sent).toHaveLength(1);
    expect(await getOperation(s.table, id)).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
  });

  it('puts back the entries of an operation stored handed out whose entries the store failed to write, so that it times out', async () => {
    const s = await setup({ timeoutMs: 5_000 });
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const id = await storedWithoutEntries(s, 'entries-lost');
    expect(a.sent).toEqual([expect.objectContaining({ operationId: id, attempt: 1 })]);
    expect(await openOperations(s.table)).toEqual([]);
    // Still without a result after ENTRY_SYNC_AFTER_MS: its queue entry and its place in the account's list are put back.
    await s.clock.advance(ENTRY_SYNC_AFTER_MS);
    await until(async () => (await openOperations(s.table)).length === 1);
    expect(await openOperations(s.table)).toEqual([expect.objectContaining({ id, state: 'RUNNING', attempt: 1, dispatch: expect.objectContaining({ agentId: 'a' }) })]);
    expect((await listAccountOperations(s.table, 'prod', { limit: 10 })).records.map((r) => r.id)).toEqual([id]);
    // The agent never answers: the operation times out as any other.
    await s.clock.advance(5_000);
    await until(async () => (await getOperation(s.table, id))?.state === 'TIMED_OUT');
    await until(async () => (await openOperations(s.table)).length === 0);
    expect(a.sent).toHaveLength(1);
  });

  it('lists an operation whose entries the store failed to write once it finishes, when it finishes within ENTRY_SYNC_AFTER_MS', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const id = await storedWithoutEntries(s, 'quick-entries-lost');
    expect(await s.dispatcher.recordResult('a', result(a.sent[0]!))).toBe('recorded');
    // Its finish found no queue entry to delete: its place in the account's list is written instead.
    await until(async () => (await listAccountOperations(s.table, 'prod', { limit: 10 })).records.length === 1);
    expect((await listAccountOperations(s.table, 'prod', { limit: 10 })).records).toEqual([expect.objectContaining({ id, state: 'SUCCEEDED' })]);
    expect(await openOperations(s.table)).toEqual([]);
  });

  it('puts back the queue entry of a claimed operation whose entries the store failed to write, when its stream ends, so it goes out again', async () => {
    const s = await setup({ redispatchAfterMs: 0 });
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const entries = refusingOnce('BatchWrite');
    entries.arm();
    const input = { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: 'queued-entries-lost', requestHash: 'h', request: compress(request), record: { action: 'scale' as const, objects: 1 }, now: s.clock.now() };
    let stored: OperationRecord | undefined;
    await expect(createOperation(entries.table(s.table), input, (op) => (stored = op))).rejects.toThrow('the table failed');
    expect(await openOperations(s.table)).toEqual([]);
    // Announced all the same: a named wake claims it. Its stream ends before the agent takes it.
    a.fail = new Error('stream ended');
    s.dispatcher.claimNamed({ id: stored!.id, account: 'prod' });
    await until(async () => (await openOperations(s.table)).length === 1);
    expect(await openOperations(s.table)).toEqual([expect.objectContaining({ id: stored!.id, attempt: 1, dispatch: expect.objectContaining({ agentId: 'a', endReason: 'the stream to agent a ended before it took the operation' }) })]);
    // Found by the next pass, it goes to the agent that is there now.
    const b = new StreamDouble('b');
    s.directory.agents = [b];
    s.dispatcher.wake();
    await until(() => b.sent.length === 1);
    expect(b.sent[0]).toMatchObject({ operationId: stored!.id, attempt: 2 });
  });

  it('gives a released agent back: a replay of a stored key sends nothing, and the next operation may have it', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const stored = await s.create();
    const reservation = s.events.reserve(stored.id, 'prod', s.clock.now());
    const again = await createOperation(s.table, { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: stored.idempotencyKey, requestHash: 'h', request: compress(request), record: { action: 'scale', objects: 1 }, now: s.clock.now(), dispatch: reservation!.dispatch });
    expect(again.created).toBe(false);
    reservation!.release();
    reservation!.handOut({ record: again.record, request });
    expect(a.sent).toEqual([]);
    // The queue entry is the stored operation's, not the replay's hand-out.
    expect(await openOperations(s.table)).toEqual([expect.objectContaining({ id: stored.id, state: 'QUEUED', attempt: 0 })]);
    expect(s.events.reserve(stored.id, 'prod', s.clock.now())).toBeDefined();
  });

  it('sends again an operation handed out here on a stream still open that it has no record of sending', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const op = await s.create();
    // Stored handed out by this replica, but never sent (a write that reported an error although it was made).
    const claimed = await claimOperation(s.table, op.id, 0, { agentId: 'a', sessionId: a.id, replicaId: 'replica-1', at: s.clock.now() }, s.clock.now());
    await syncQueueEntry(s.table, claimed!);
    s.dispatcher.wake();
    await until(() => a.sent.length === 1);
    expect(a.sent[0]).toMatchObject({ operationId: op.id, attempt: 1 });
    s.dispatcher.wake();
    await s.settle();
    expect(a.sent).toHaveLength(1);
    expect((await getOperation(s.table, op.id))?.attempt).toBe(1);
  });

  it('finds queued operations by reading the queue, and spreads them over the holders', async () => {
    const s = await setup();
    const ops = [await s.create(), await s.create(), await s.create(), await s.create()];
    const a = new StreamDouble('a');
    const b = new StreamDouble('b');
    s.directory.agents = [a, b];
    await s.clock.advance(1000);
    await until(() => a.sent.length + b.sent.length === 4);
    expect([a.sent.length, b.sent.length]).toEqual([2, 2]);
    expect(new Set([...a.sent, ...b.sent].map((o) => o.operationId))).toEqual(new Set(ops.map((o) => o.id)));
  });

  it('reads the queue for a holding gained only when the last read found open operations, or one is under way', async () => {
    const held = holdingTable(await tables.fresh(), () => false);
    const s = await setup({}, held.table);
    const queueReads = () => held.made.filter((input) => isOperationQueuePartition((input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk'])).length;
    // The first read, at start: the queue is empty.
    await until(() => queueReads() === OPERATION_QUEUE_PARTITIONS.length);
    await s.settle();
    // Agents coming to hold accounts, as an activation makes them: nothing open to hand out, no read.
    for (let i = 0; i < 5; i++) s.dispatcher.holdingGained();
    await s.settle();
    expect(queueReads()).toBe(OPERATION_QUEUE_PARTITIONS.length);
    // An operation no agent here holds the account of: the poll finds it and leaves it open.
    const op = await s.create();
    await s.clock.advance(1000);
    await until(() => queueReads() === 2 * OPERATION_QUEUE_PARTITIONS.length);
    await s.settle();
    // Now an agent here holds it: read at once, without waiting for the poll, and handed out.
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    s.dispatcher.holdingGained();
    await until(() => a.sent.length === 1);
    expect(a.sent[0]).toMatchObject({ operationId: op.id, attempt: 1 });
    expect(queueReads()).toBe(3 * OPERATION_QUEUE_PARTITIONS.length);
  });

  it('never hands the same attempt out twice, also from two replicas at once', async () => {
    const first = await setup();
    const second = await setup({}, first.table);
    const a = new StreamDouble('a');
    const b = new StreamDouble('b');
    first.directory.agents = [a];
    second.directory.agents = [b];
    const ops = await Promise.all(Array.from({ length: 12 }, () => first.create()));
    first.dispatcher.wake();
    second.dispatcher.wake();
    await until(() => a.sent.length + b.sent.length === 12);
    await first.settle();
    expect(a.sent.length + b.sent.length).toBe(12);
    expect(new Set([...a.sent, ...b.sent].map((o) => o.operationId)).size).toBe(12);
    for (const op of ops) expect((await getOperation(first.table, op.id))?.attempt).toBe(1);
  });

  it('hands an operation out again when its stream ended before the result: to the same agent once back, else to another after redispatchAfterMs', async () => {
    const s = await setup();
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const op = await s.create();
    s.dispatcher.wake();
    await until(() => a.sent.length === 1);
    // Agent a's stream ends; it comes back on a new stream.
    const back = new StreamDouble('a', 'session-a-2');
    s.directory.agents = [back];
    s.dispatcher.wake();
    await until(() => back.sent.length === 1);
    expect(back.sent[0]).toMatchObject({ operationId: op.id, attempt: 2 });
    expect((await getOperation(s.table, op.id))?.dispatch).toMatchObject({ agentId: 'a', sessionId: 'session-a-2' });
    // Its stream ends again, and only agent b is here: b waits redispatchAfterMs.
    const b = new StreamDouble('b');
    s.directory.agents = [b];
    s.dispatcher.wake();
    await until(async () => (await getOperation(s.table, op.id))?.dispatch?.endedAt !== undefined);
    await s.settle();
    expect(b.sent).toEqual([]);
    await s.clock.advance(5000);
    await until(() => b.sent.length === 1);
    expect(b.sent[0]).toMatchObject({ operationId: op.id, attempt: 3 });
  });

  it('marks a hand-out that the agent never took, so it goes out again', async () => {
    const s = await setup({ redispatchAfterMs: 0 });
    const a = new StreamDouble('a');
    a.fail = new Error('the agent stream has ended: stream cancelled');
    s.directory.agents = [a];
    const op = await s.create();
    s.dispatcher.wake();
    await until(async () => (await getOperation(s.table, op.id))?.dispatch?.endedAt !== undefined);
    expect((await getOperation(s.table, op.id))?.dispatch?.endReason).toBe('the stream to agent a ended before it took the operation');
    const back = new StreamDouble('a', 'session-a-2');
    s.directory.agents = [back];
    s.dispatcher.wake();
    await until(() => back.sent.length === 1);
    expect(back.sent[0]?.attempt).toBe(2);
  });

  it('hands out again what an agent had for an account it no longer holds', async () => {
    const s = await setup({ redispatchAfterMs: 0 });
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const op = await s.create();
    s.dispatcher.wake();
    await until(() => a.sent.length === 1);
    const b = new StreamDouble('b');
    s.directory.agents = [a, b];
    // Agent a was refused the account (or it was removed from it): it will not run what it got.
    a.accounts = [];
    await s.dispatcher.holdingLost(a.id, 'prod');
    expect((await getOperation(s.table, op.id))?.dispatch).toMatchObject({ agentId: 'a', endReason: 'agent a no longer holds account prod' });
    await until(() => b.sent.length === 1);
    expect(b.sent[0]).toMatchObject({ operationId: op.id, attempt: 2 });
  });

  it('takes over the operations of a replica that is gone, after orphanAfterMs', async () => {
    const s = await setup();
    const op = await s.create();
    await claimOperation(s.table, op.id, 0, { agentId: 'far', sessionId: 'x', replicaId: 'replica-2', at: s.clock.now() }, s.clock.now());
    const b = new StreamDouble('b');
    s.directory.agents = [b];
    s.directory.live = new Set(['x']);
    await s.clock.advance(60_000);
    await s.settle();
    expect(b.sent).toEqual([]);
    // The stream it went out on is no longer live anywhere.
    s.directory.live = new Set();
    await s.clock.advance(1000);
    await until(() => b.sent.length === 1);
    expect(b.sent[0]).toMatchObject({ operationId: op.id, attempt: 2 });
  });

  it('ends an operation TIMED_OUT at its deadline, saying where it was, and ignores a later result', async () => {
    const s = await setup({ timeoutMs: 10_000 });
    const nobody = await s.create({ account: 'orphaned' });
    const a = new StreamDouble('a');
    s.directory.agents = [a];
    const slow = await s.create({ timeoutMs: 5_000 });
    s.dispatcher.wake();
    await until(() => a.sent.length === 1);
    // The agent is told how long it has.
    expect(a.sent.find((o) => o.operationId === slow.id)?.timeoutMs).toBe(5000);
    s.directory.agents = [];
    await s.clock.advance(5000);
    await until(async () => (await getOperation(s.table, slow.id))?.state === 'TIMED_OUT');
    expect(await getOperation(s.table, slow.id)).toMatchObject({ message: 'timed out after 5000 ms: no result from agent a (handed out 1 time); a result that arrives later is ignored', errorCode: 'timeout' });
    await s.clock.advance(5000);
    await until(async () => (await getOperation(s.table, nobody.id))?.state === 'TIMED_OUT');
    expect(await getOperation(s.table, nobody.id)).toMatchObject({ message: 'timed out after 10000 ms: no agent holding account orphaned took it; a result that arrives later is ignored', errorCode: 'timeout' });
    const late = a.sent.find((o) => o.operationId === slow.id) as Operation;
    expect(await s.dispatcher.recordResult('a', result(late))).toBe('ignored');
    expect((await getOperation(s.table, slow.id))?.state).toBe('TIMED_OUT');
    expect(await openOperations(s.table)).toEqual([]);
  });

  it('keeps the error code of a failed result when it is one of the known codes, and takes any other result without it', async () => {
    const s = await setup();
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const cases: [string, boolean, string, string | undefined][] = [
      ['known', false, 'invalid_input', 'invalid_input'],
      ['none', false, '', undefined],
      // A newer agent's code, a hostile one, one far past any code's length: not this driver's to keep.
      ['unknown', false, 'not_a_code', undefined],
      ['cased', false, 'INVALID_INPUT', undefined],
      ['oversized', false, `invalid_input${'x'.repeat(100_000)}`, undefined],
      // A success has no failure to name.
      ['on success', true, 'internal', undefined],
    ];
    for (const [name, ok, sent, kept] of cases) {
      const op = await s.create();
      s.events.queued({ record: op, request });
      await until(() => agent.sent.some((o) => o.operationId === op.id));
      const logsBefore = s.logs.lines.length;
      const answer = result(agent.sent.find((o) => o.operationId === op.id)!, ok, { errorCode: sent, message: `answer ${name}` });
      expect(await s.dispatcher.recordResult('agent-1', answer), name).toBe('recorded');
      const stored = await getOperation(s.table, op.id);
      // Everything else of the result is taken as it came.
      expect(stored, name).toMatchObject({ state: ok ? 'SUCCEEDED' : 'FAILED', message: `answer ${name}`, outcomes: [{ result: ok ? 'scaled' : 'failed' }], report: { agentId: 'agent-1' } });
      expect(stored?.errorCode, name).toBe(kept);
      const dropped = s.logs.lines.slice(logsBefore).filter((l) => l.msg === 'operation result taken without its error code: not one this driver knows, or on a success');
      expect(dropped, name).toEqual(sent !== '' && kept === undefined ? [expect.objectContaining({ operationId: op.id, errorCodeLength: sent.length })] : []);
      // The peer's text never reaches the log.
      if (!ok && sent.length > 0 && kept === undefined) expect(JSON.stringify(s.logs.lines.slice(logsBefore)), name).not.toContain(sent);
    }
  });

  it('ends an operation whose request is missing from the table FAILED with the code internal, unsent', async () => {
    const s = await setup();
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    // Random text does not compress: the request is kept in an item of its own, which is then lost.
    const manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lost', namespace: 'shop' }, data: { blob: randomBytes(6000).toString('base64') } };
    const { record: op } = await createOperation(s.table, {
      account: 'prod',
      submittedBy: 'oidc:alice',
      idempotencyKey: 'lost',
      requestHash: 'hl',
      request: compress({ action: 'deploy', manifests: [manifest], forceConflicts: false }),
      record: { action: 'deploy', objects: 1 },
      now: s.clock.now(),
    });
    await s.table.client.send(new DeleteCommand({ TableName: s.table.tableName, Key: operationRequestKey(op.id, 'hl') }));
    s.dispatcher.wake();
    await until(async () => (await getOperation(s.table, op.id))?.state === 'FAILED');
    expect(await getOperation(s.table, op.id)).toMatchObject({ state: 'FAILED', message: 'the request of this operation is not in the table; it was not run', errorCode: 'internal' });
    expect(agent.sent).toEqual([]);
  });

  it('ignores a result from an agent the operation was never handed to, and takes the one it was handed to', async () => {
    const s = await setup();
    const agent = new StreamDouble('agent-1');
    s.directory.agents = [agent];
    const op = await s.create();
    expect(await s.dispatcher.recordResult('agent-1', result({ operationId: op.id, account: 'prod', attempt: 1 } as Operation))).toBe('ignored');
    expect((await getOperation(s.table, op.id))?.state).toBe('QUEUED');
    s.events.queued({ record: op, request });
    await until(() => agent.sent.length === 1);
    expect(await s.dispatcher.recordResult('intruder', result(agent.sent[0]!))).toBe('ignored');
    expect((await getOperation(s.table, op.id))?.state).toBe('RUNNING');
    expect(s.logs.lines.find((l) => l.msg === 'operation result ignored: it was never handed to agent intruder')).toMatchObject({ level: 40 });
    expect(await s.dispatcher.recordResult('agent-1', result(agent.sent[0]!))).toBe('recorded');
  });

  it('ignores results for operations it does not know or of another account', async () => {
    const s = await setup();
    const op = await s.create();
    const ghost = { operationId: '0000000000001-0000000000000000', account: 'prod', attempt: 1 } as Operation;
    expect(await s.dispatcher.recordResult('a', result(ghost))).toBe('ignored');
    expect(await s.dispatcher.recordResult('a', result({ operationId: op.id, account: 'stage', attempt: 1 } as Operation))).toBe('ignored');
    expect((await getOperation(s.table, op.id))?.state).toBe('QUEUED');
    expect(s.logs.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['operation result ignored: no such operation', 'operation result ignored: it belongs to account prod']));
  });
});

describe('stored outcomes', () => {
  it('keep every message while they fit the item, and shorten long ones when they would not', () => {
    const outcome = (i: number, message: string) => ({ index: i, apiVersion: 'v1', kind: 'ConfigMap', name: `c${i}`, result: 'failed' as const, message });
    const small = [outcome(0, 'x'.repeat(3000))];
    expect(boundedOutcomes(small)).toEqual(small);
    // More than the item holds as JSON, but they compress to little: every message kept.
    const compressible = Array.from({ length: 200 }, (_, i) => outcome(i, 'y'.repeat(3000)));
    expect(boundedOutcomes(compressible)).toEqual(compressible);
    // Messages that do not compress, 500 of them: more than the item holds.
    const large = Array.from({ length: 500 }, (_, i) => outcome(i, randomBytes(3000).toString('base64')));
    const bounded = boundedOutcomes(large);
    expect(bounded).toHaveLength(500);
    expect(bounded.every((o) => (o.message?.length ?? 0) <= 256)).toBe(true);
    expect(compress(bounded).length).toBeLessThan(300 * 1024);
  });
});
