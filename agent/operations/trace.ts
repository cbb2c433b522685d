/**
 * The agent's own part of each operation's path, stamped at 0.1 ms resolution, for benchmarks
 * (docs/operations.md#the-agents-part-of-the-path). Off unless `VENDOR_AGENT_OPERATION_TRACE` names a file: then
 * every operation that reaches its result's write appends one JSON line there. Off, nothing on the
 * path does more than test that the trace is undefined.
 */
import { createWriteStream } from 'node:fs';

export const OPERATION_TRACE_ENV = 'VENDOR_AGENT_OPERATION_TRACE';

/**
 * In path order: the operation message's arrival on the stream (before its decoding), taken by the
 * operations worker, its task started by the budget, its first cluster request written to the socket,
 * its last answer read, the execution finished, and the result written on the stream.
 */
export const TRACE_POINTS = ['received', 'taken', 'started', 'requestWritten', 'answered', 'finished', 'resultWritten'] as const;
export type TracePoint = (typeof TRACE_POINTS)[number];

/**
 * The steps between the points, in ms: `queue` (decoding, validation, the stream's queue and the
 * account's), `budget`, `prepare` (discovery, checks, the request's body, the socket write), `cluster`
 * (the API server and the answer's reading), `outcome` (the answer's parsing), `report` (the result
 * through the outbox onto the stream); `own` is everything but `cluster`.
 */
export interface OperationTraceRecord {
  agentId: string;
  operationId: string;
  /** Wall clock (`performance.timeOrigin + performance.now()`), ms since the epoch. */
  at: Partial<Record<TracePoint, number>>;
  steps: Partial<Record<'queue' | 'budget' | 'prepare' | 'cluster' | 'outcome' | 'report' | 'own', number>>;
  /**
   * The agent process's CPU (user and system), ms at 0.01: `path` from the arrival to the result's
   * write, `sincePrevious` since the previous record's result was written (everything the process did
   * meanwhile: the work after the result, heartbeats, the cache).
   */
  cpu: { path?: number; sincePrevious?: number };
}

const STEPS: [keyof OperationTraceRecord['steps'], TracePoint, TracePoint][] = [
  ['queue', 'received', 'taken'],
  ['budget', 'taken', 'started'],
  ['prepare', 'started', 'requestWritten'],
  ['cluster', 'requestWritten', 'answered'],
  ['outcome', 'answered', 'finished'],
  ['report', 'finished', 'resultWritten'],
];

/** Operations traced at once at most; one that never reaches its result's write is forgotten first. */
const OPEN_LIMIT = 1_000;

const tenth = (ms: number) => Math.round(ms * 10) / 10;
const hundredth = (ms: number) => Math.round(ms * 100) / 100;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** What the cluster client tells of a request: written to its socket, its answer read. */
export interface RequestTrace {
  written(): void;
  answered(): void;
}

export class OperationTrace {
  readonly #agentId: string;
  readonly #sink: (record: OperationTraceRecord) => void;
  readonly #open = new Map<string, Partial<Record<TracePoint, number>>>();
  /** CPU (µs) at each open operation's arrival, and at the last result's write. */
  readonly #cpuAtArrival = new Map<string, number>();
  #cpuAtLastResult: number | undefined;

  constructor(agentId: string, sink: (record: OperationTraceRecord) => void) {
    this.#agentId = agentId;
    this.#sink = sink;
  }

  now(): number {
    return performance.timeOrigin + performance.now();
  }

  /**
   * Stamps `point` of an operation: the first stamp of each point stands, except `answered`, whose
   * last does (an operation of several requests). Only `received` opens an operation's record;
   * `resultWritten` closes it (a result sent again later finds none and is not recorded again).
   */
  mark(operationId: string, point: TracePoint, at = this.now()): void {
    let points = this.#open.get(operationId);
    if (points === undefined) {
      if (point !== 'received') return;
      if (this.#open.size >= OPEN_LIMIT) {
        const oldest = this.#open.keys().next().value as string;
        this.#open.delete(oldest);
        this.#cpuAtArrival.delete(oldest);
      }
      this.#open.set(operationId, (points = {}));
      this.#cpuAtArrival.set(operationId, cpuMicros());
    }
    if (points[point] === undefined || point === 'answered') points[point] = at;
    if (point !== 'resultWritten') return;
    const cpuNow = cpuMicros();
    const arrival = this.#cpuAtArrival.get(operationId);
    const previous = this.#cpuAtLastResult;
    const cpu: OperationTraceRecord['cpu'] = {
      ...(arrival === undefined ? {} : { path: hundredth((cpuNow - arrival) / 1000) }),
      ...(previous === undefined ? {} : { sincePrevious: hundredth((cpuNow - previous) / 1000) }),
    };
    this.#cpuAtLastResult = cpuNow;
    this.#open.delete(operationId);
    this.#cpuAtArrival.delete(operationId);
    // The line is made and written after the result has left.
    setImmediate(() => this.#sink(this.#record(operationId, points, cpu)));
  }

  /** The hooks the cluster client calls for the requests of one operation. */
  requests(operationId: string): RequestTrace {
    return { written: () => this.mark(operationId, 'requestWritten'), answered: () => this.mark(operationId, 'answered') };
  }

  #record(operationId: string, points: Partial<Record<TracePoint, number>>, cpu: OperationTraceRecord['cpu']): OperationTraceRecord {
    const at: OperationTraceRecord['at'] = {};
    for (const p of TRACE_POINTS) if (points[p] !== undefined) at[p] = tenth(points[p]);
    const steps: OperationTraceRecord['steps'] = {};
    for (const [name, from, to] of STEPS) {
      const a = points[from];
      const b = points[to];
      if (a !== undefined && b !== undefined) steps[name] = tenth(b - a);
    }
    const { received, resultWritten } = points;
    if (received !== undefined && resultWritten !== undefined) steps.own = tenth(resultWritten - received - (steps.cluster ?? 0));
    return { agentId: this.#agentId, operationId, at, steps, cpu };
  }
}

/** The trace `VENDOR_AGENT_OPERATION_TRACE` asks for (JSON lines appended to that file), or undefined. */
export function operationTraceFromEnv(env: NodeJS.ProcessEnv, agentId: string): OperationTrace | undefined {
  const file = env[OPERATION_TRACE_ENV];
  if (file === undefined || file === '') return undefined;
  const out = createWriteStream(file, { flags: 'a' });
  // A trace that cannot be written must not stop the agent; the operations go on untraced.
  out.on('error', () => undefined);
  return new OperationTrace(agentId, (record) => out.write(`${JSON.stringify(record)}\n`));
}
