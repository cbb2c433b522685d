/**
 * The agent's part of each operation's path, as marks of the path trace (shared/operations/path-trace.ts,
 * docs/operations.md#the-agents-part-of-the-path): on with `VENDOR_PATH_TRACE=<dir>` like every other
 * process of the path, the agent's process writing its own file there on the same monotonic clock.
 * Off, the agent has no trace and nothing on the path does more than test that it is undefined.
 */
import { pathTraceFromEnv, traceNow, type PathTrace } from '../../shared/operations/path-trace.ts';

/**
 * The agent's points and their marks, in path order: the operation message's arrival on the stream
 * (before its decoding), taken by the operations worker, its task started by the budget, its first
 * cluster request written to the socket (the apply's PATCH for a deploy), its last answer read, the
 * execution finished, and the result about to be written on the stream.
 */
const MARKS = {
  received: 'agent.received',
  taken: 'agent.taken',
  started: 'agent.started',
  requestWritten: 'agent.patch_sent',
  answered: 'agent.patch_answered',
  finished: 'agent.finished',
  resultWritten: 'agent.result_written',
} as const;
export type AgentTracePoint = keyof typeof MARKS;

/** The agent's marks in path order, as the hop reader (bench/operations-hops.ts) places them. */
export const AGENT_PATH_MARKS = [
  MARKS.received,
  MARKS.taken,
  MARKS.started,
  MARKS.requestWritten,
  MARKS.answered,
  MARKS.finished,
  MARKS.resultWritten,
] as const;

/**
 * Figures the agent writes with each operation's result, an amount of its process's CPU (user and
 * system, ms at 0.01) in place of a time: `agent.cpu_path` from the arrival to the result's write,
 * `agent.cpu_per_operation` since the previous traced result's write (everything the process did
 * meanwhile: the work after the result, heartbeats, the cache).
 */
export const AGENT_CPU_FIGURES = { cpu_path: 'agent.cpu_path', cpu_per_operation: 'agent.cpu_per_operation' } as const;

/** Operations traced at once at most; one that never reaches its result's write is forgotten first. */
const OPEN_LIMIT = 1_000;

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

/** An operation between its arrival and its result's write. */
interface OpenOperation {
  receivedAt: number;
  cpuAtArrival: number;
  /** Taken by the worker here: only then is its path written. */
  taken: boolean;
  requestWritten: boolean;
  /** The last answer read so far, written when the execution finishes. */
  answeredAt: number | undefined;
}

export class AgentPathTrace {
  readonly #write: PathTrace;
  readonly #open = new Map<string, OpenOperation>();
  #cpuAtLastResult: number | undefined;

  constructor(write: PathTrace) {
    this.#write = write;
  }

  now(): number {
    return traceNow();
  }

  /**
   * Marks `point` of an operation, at `at` (a time from `now`) or now. One path per operation:
   * `received` opens it (a second arrival while it is open, a hand-out again, does not move it), and
   * its marks are written from `taken` on, so an operation handed out again after it finished here,
   * whose result is only sent again, writes none. `requestWritten` is the first request's,
   * `answered` the last answer's (an operation of several requests). `resultWritten` closes it and
   * adds the CPU figures.
   */
  mark(operationId: string, point: AgentTracePoint, at = traceNow()): void {
    const op = this.#open.get(operationId);
    if (op === undefined) {
      if (point === 'received') this.#opened(operationId, at);
      return;
    }
    if (point === 'taken') {
      if (op.taken) return;
      op.taken = true;
      this.#write(MARKS.received, operationId, op.receivedAt);
    } else if (point === 'resultWritten') {
      this.#open.delete(operationId);
      if (op.taken) this.#resultWritten(operationId, op, at);
      return;
    } else if (!op.taken || point === 'received') {
      return;
    } else if (point === 'requestWritten') {
      if (op.requestWritten) return;
      op.requestWritten = true;
    } else if (point === 'answered') {
      op.answeredAt = at;
      return;
    } else if (point === 'finished' && op.answeredAt !== undefined) {
      this.#write(MARKS.answered, operationId, op.answeredAt);
    }
    this.#write(MARKS[point], operationId, at);
  }

  /** The hooks the cluster client calls for the requests of one operation. */
  requests(operationId: string): RequestTrace {
    return { written: () => this.mark(operationId, 'requestWritten'), answered: () => this.mark(operationId, 'answered') };
  }

  #opened(operationId: string, at: number): void {
    if (this.#open.size >= OPEN_LIMIT) this.#open.delete(this.#open.keys().next().value as string);
    this.#open.set(operationId, { receivedAt: at, cpuAtArrival: cpuMicros(), taken: false, requestWritten: false, answeredAt: undefined });
  }

  #resultWritten(operationId: string, op: OpenOperation, at: number): void {
    const cpuNow = cpuMicros();
    this.#write(MARKS.resultWritten, operationId, at);
    this.#write(AGENT_CPU_FIGURES.cpu_path, operationId, hundredth((cpuNow - op.cpuAtArrival) / 1000));
    if (this.#cpuAtLastResult !== undefined) this.#write(AGENT_CPU_FIGURES.cpu_per_operation, operationId, hundredth((cpuNow - this.#cpuAtLastResult) / 1000));
    this.#cpuAtLastResult = cpuNow;
  }
}

/** The agent's marks on the path trace `VENDOR_PATH_TRACE` of `env` asks for, or undefined. */
export function agentPathTraceFromEnv(env: NodeJS.ProcessEnv): AgentPathTrace | undefined {
  const write = pathTraceFromEnv(env);
  return write === undefined ? undefined : new AgentPathTrace(write);
}
