import { afterEach, describe, expect, it, vi } from 'vitest';
import { RawAgent, helloMessage } from '../test/raw-agent.ts';
import { parseDriverGrpcConfig } from './config.ts';
import { startDriver } from './server.ts';
import { getSession as readSession } from '../shared/table/agents/sessions.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import { getAgentBinding } from '../shared/table/agents/bindings.ts';
import { getSession } from '../shared/table/agents/sessions.ts';
import { faultyTable } from '../test/support/store-faults.ts';
import { useTestTables } from '../test/support/table.ts';
import { OPENING_STEP_TRIES, OpeningLine } from './session-openings.ts';
import { TableSessionStore, type SessionRecord } from './session-store.ts';

const tables = useTestTables();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const record = (sessionId: string, openedAt = 1_000): SessionRecord => ({
  sessionId,
  agentId: 'agent-1',
  zone: 'z1',
  agentVersion: '1',
  identity: 'good',
  unzoned: false,
  replicaId: 'r1',
  peer: 'ipv4:127.0.0.1:1',
  openedAt,
  leaseExpiresAt: openedAt + 30_000,
  staticAccounts: [],
});

/** A store on a table whose client tries each request once, so that the faults reach the store. */
async function faultyStore() {
  const table = await tables.fresh();
  const faulty = await faultyTable(table, { maxAttempts: 1 });
  cleanups.push(() => faulty.faults.close());
  return { table, faults: faulty.faults, store: new TableSessionStore(faulty.table, silentLogger(), 1_000, { clock: systemClock }) };
}

describe('recording a hello', () => {
  it('binds the agent id of a hello without reading the binding first when the id is unbound or bound to the same identity', async () => {
    const { faults, store } = await faultyStore();
    await store.open(record('s-1'), '');
    await store.open(record('s-2', 2_000), 's-1');
    const first = faults.attempts.map((a) => a.operation);
    // The second hello reads its previous session (for the resume), never the binding.
    expect(first.filter((op) => op === 'GetItem')).toHaveLength(1);
    expect(first.filter((op) => op === 'PutItem')).toHaveLength(4);
  });

  it('tries a step again within the hello when the table lost its answer, and resumes from the previous session as read before', async () => {
    const { table, faults, store } = await faultyStore();
    await store.open(record('s-1'), '');
    await store.renew(record('s-1'), 40_000, 7, 2_000);
    // Both puts of the next hello land, but their answers are lost: the binding's and the session's.
    faults.set({ kind: 'lost-answer' }, { only: ['PutItem'], times: 2 });
    const resume = await store.open(record('s-2', 3_000), 's-1');
    expect(resume).toEqual({ known: true, lastProcessedSeq: 7 });
    expect(await getAgentBinding(table, 'agent-1')).toMatchObject({ identity: 'good', sessionId: 's-2' });
    expect(await getSession(table, 'z1', 'agent-1')).toMatchObject({ sessionId: 's-2', lastProcessedSeq: 0 });
  });

  it('refuses the hello as the table not answering once a step has failed every try', async () => {
    const { faults, store } = await faultyStore();
    faults.set({ kind: 'error', name: 'ProvisionedThroughputExceededException' });
    await expect(store.open(record('s-1'), '')).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(faults.attempts).toHaveLength(OPENING_STEP_TRIES);
  });
});

describe('a hello waiting for its session to be recorded', () => {
  it('keeps its stream past the lease, since the wait is the driver\'s', async () => {
    const table = await tables.fresh();
    const faulty = await faultyTable(table);
    cleanups.push(() => faulty.faults.close());
    // The binding's write takes longer than the whole lease.
    faulty.faults.set({ kind: 'slow', ms: 700 }, { only: ['PutItem'], times: 1 });
    const d = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['session-openings-token-0123456789'] }, sessions: { heartbeatIntervalMs: 100, leaseMs: 300 } }),
      table: faulty.table,
      log: silentLogger(),
      modules: [],
    });
    cleanups.push(() => d.close(100));
    const agent = RawAgent.messages({ port: d.port, token: 'session-openings-token-0123456789' });
    cleanups.push(async () => agent.close());
    agent.send(helloMessage('agent-1'));
    await vi.waitFor(() => expect(d.sessions().map((s) => s.agentId)).toEqual(['agent-1']), { timeout: 5_000 });
  });

  it('records the lease of a hello that waited in line from its turn, not from its arrival', async () => {
    const table = await tables.fresh();
    const faulty = await faultyTable(table);
    cleanups.push(() => faulty.faults.close());
    // A clock that has always moved on by the next reading, as the system clock may have by a millisecond.
    let ticks = 0;
    const clock = { now: () => systemClock.now() + ticks++, sleep: systemClock.sleep };
    const store = new TableSessionStore(faulty.table, silentLogger(), 1_000, { clock, concurrentOpenings: 1 });
    faulty.faults.set({ kind: 'slow', ms: 600 }, { only: ['PutItem'], times: 1 });
    const now = Date.now();
    const first = { ...record('s-1', now), agentId: 'agent-a' };
    const second = { ...record('s-2', now), agentId: 'agent-b' };
    await Promise.all([store.open(first, ''), store.open(second, '')]);
    // The first ran at once: its lease is the one it came with.
    expect((await readSession(table, 'z1', 'agent-a'))?.leaseExpiresAt).toBe(first.leaseExpiresAt);
    // The second waited behind the first's slow write: its lease runs from its turn.
    expect((await readSession(table, 'z1', 'agent-b'))?.leaseExpiresAt).toBeGreaterThanOrEqual(second.leaseExpiresAt + 500);
  });
});

describe('OpeningLine', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('runs at most its limit at a time, the others in the order they came, and skips a task whose stream ended while it waited', async () => {
    const line = new OpeningLine(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const waited: boolean[] = [];
    const gone = new AbortController();
    const runs = [0, 1, 2, 3].map((i) =>
      line.run(
        async (w) => {
          started.push(i);
          waited[i] = w;
          await gates[i]!.promise;
          return i;
        },
        i === 2 ? gone.signal : undefined,
      ),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(line.waiting).toBe(2);
    gone.abort();
    gates[1]!.resolve();
    await expect(runs[2]).rejects.toMatchObject({ code: 'unavailable', message: 'the agent stream ended before its hello was recorded' });
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 3]);
    expect(line.running).toBe(2);
    gates[0]!.resolve();
    gates[3]!.resolve();
    expect(await Promise.all([runs[0], runs[1], runs[3]])).toEqual([0, 1, 3]);
    expect(line.running).toBe(0);
    // Each task is told whether it waited for its place.
    expect(waited).toEqual([false, false, undefined, true]);
  });
});
