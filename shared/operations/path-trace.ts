/**
 * A trace of the marks an operation passes in each process of its path (the API, the replicas, the
 * agents), for the operations benchmark's breakdown at 0.1 ms resolution (docs/benchmarks.md, "Where
 * an operation's time goes"). Off unless `VENDOR_PATH_TRACE` names a directory: then each process
 * appends `<time>\t<mark>\t<id>` lines to a file of its own there, `time` being the machine's
 * monotonic clock in ms (fractional): one clock for every process of the machine, which no
 * adjustment of the wall clock moves. Off, `pathTrace` is undefined and a mark costs the caller one
 * check. A figure (a name the reader knows as one, such as the agent's CPU per operation) is written
 * the same way with an amount in ms in place of the time.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const PATH_TRACE_ENV = 'VENDOR_PATH_TRACE';
/** Marks are written out this often (and when the process exits), never on the path itself. */
const FLUSH_EVERY_MS = 100;
/** Each process's file in the directory ends so. */
export const PATH_TRACE_SUFFIX = '.trace';

/**
 * Records that operation (or, before it has an id, request) `id` reached `mark`, at `at` when given
 * (a time taken earlier with `traceNow`) or now.
 */
export type PathTrace = (mark: string, id: string, at?: number) => void;

/** Now, on the trace's clock: ms of the machine's monotonic clock. */
export function traceNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The traces open in this process, by file: one writer per file. */
const open = new Map<string, PathTrace & { flush(): void }>();

/**
 * A trace writing to `dir/<name>.trace`; flushed every 100 ms and at exit, or by `flush`. Opened again
 * for the same file, it is the same trace.
 */
export function openPathTrace(dir: string, name = String(process.pid)): PathTrace & { flush(): void } {
  const file = join(dir, `${name}${PATH_TRACE_SUFFIX}`);
  const opened = open.get(file);
  if (opened !== undefined) return opened;
  mkdirSync(dir, { recursive: true });
  let buffered: string[] = [];
  const flush = (): void => {
    if (buffered.length === 0) return;
    const text = buffered.join('');
    buffered = [];
    appendFileSync(file, text);
  };
  setInterval(flush, FLUSH_EVERY_MS).unref();
  process.once('exit', flush);
  const trace = (mark: string, id: string, at?: number): void => {
    buffered.push(`${(at ?? traceNow()).toFixed(3)}\t${mark}\t${id}\n`);
  };
  const opening = Object.assign(trace, { flush });
  open.set(file, opening);
  return opening;
}

/** The trace `VENDOR_PATH_TRACE` of `env` asks for, or undefined when it is not set. */
export function pathTraceFromEnv(env: NodeJS.ProcessEnv): PathTrace | undefined {
  const dir = env[PATH_TRACE_ENV];
  return dir === undefined || dir === '' ? undefined : openPathTrace(dir);
}

/** This process's trace, or undefined (the default) when `VENDOR_PATH_TRACE` is not set. */
export const pathTrace: PathTrace | undefined = pathTraceFromEnv(process.env);
