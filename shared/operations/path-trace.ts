/**
 * A trace of the marks an operation passes in each process of its path (the API, the replicas, the
 * agents), for the operations benchmark's breakdown at 0.1 ms resolution (docs/benchmarks.md, "Where
 * an operation's time goes"). Off unless `VENDOR_PATH_TRACE` names a directory: then each process
 * appends `<time>\t<mark>\t<id>` lines to a file of its own there, `time` being the machine's
 * monotonic clock in ms (fractional): one clock for every process of the machine, which no
 * adjustment of the wall clock moves. Off, `pathTrace` is undefined and a mark costs the caller one
 * check.
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

/** A trace writing to `dir/<name>.trace`; flushed every 100 ms and at exit, or by `flush`. */
export function openPathTrace(dir: string, name = String(process.pid)): PathTrace & { flush(): void } {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}${PATH_TRACE_SUFFIX}`);
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
  return Object.assign(trace, { flush });
}

const traceDir = process.env[PATH_TRACE_ENV];
/** This process's trace, or undefined (the default) when `VENDOR_PATH_TRACE` is not set. */
export const pathTrace: PathTrace | undefined = traceDir === undefined || traceDir === '' ? undefined : openPathTrace(traceDir);
