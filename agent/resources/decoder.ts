/**
 * Where watch lines and list pages are decoded. Parsing the JSON the API server sends is most of the
 * cache's work (a realistic pod is 6 KB of JSON), so an agent with more than one CPU decodes in
 * threads of its own while the main thread reads the network and talks to the driver. The order of
 * one scope's events is kept by its reflector, which takes the answers in the order it asked.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { VendorError } from '../../shared/errors.ts';
import { decodeBatch, decodeList, type Decoded, type DecodedList, type KindInfo } from './decode.ts';

export interface Decoder {
  /** The lines of a batch (newline-separated); a thread decoder takes the batch's memory over. */
  batch(batch: Buffer, info: KindInfo): Promise<Decoded[]>;
  list(body: string, info: KindInfo): Promise<DecodedList>;
  close(): Promise<void>;
}

/** Decodes on the calling thread. */
export const inlineDecoder: Decoder = {
  batch: async (batch, info) => decodeBatch(batch, info),
  list: async (body, info) => decodeList(body, info),
  close: async () => undefined,
};

type Pending = { worker: number; resolve(v: unknown): void; reject(e: unknown): void };

/**
 * A batch smaller than this is decoded on the calling thread: handing it over costs more than
 * decoding it (a trickle of watch events arrives one small batch at a time).
 */
export const THREAD_MIN_BYTES = 32 * 1024;

/** The semi-space of a decoding thread: V8's default maximum (a young generation of 48 MiB). */
const DECODER_SEMI_SPACE_MB = 16;

/** The `--max-semi-space-size` the process was started with (argv or NODE_OPTIONS), if any. */
export function processSemiSpaceMb(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): number | undefined {
  const args = [...execArgv, ...nodeOptions.split(/\s+/)];
  let found: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const m = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(args[i]!);
    if (m === null) continue;
    const value = Number(m[1] ?? args[i + 1]);
    if (Number.isFinite(value)) found = value;
  }
  return found;
}

/** Threads being started with the flag set to their size; the last to run puts it back. */
let startingThreads = 0;

/**
 * Starts a thread (the script at `url`) with a young generation of a decoding thread's size. Parsing
 * a list page makes megabytes of objects at once; in a semi-space of 2 MiB (what the agent's main
 * thread runs with, to stay small) they outlive a few scavenges and are promoted, and the thread
 * spent nearly as long collecting as parsing. V8 reads `--max-semi-space-size` for every isolate it
 * makes and lets it override a thread's `resourceLimits`, so while the thread starts the flag is set
 * to the thread's size, and put back once the thread runs; a heap already made (the main thread's)
 * keeps its size.
 */
export function startDecodingThread(url: URL): Worker {
  const processMb = processSemiSpaceMb();
  if (processMb === undefined) return new Worker(url, { resourceLimits: { maxYoungGenerationSizeMb: 3 * DECODER_SEMI_SPACE_MB } });
  if (startingThreads++ === 0) setFlagsFromString(`--max-semi-space-size=${DECODER_SEMI_SPACE_MB}`);
  let started = false;
  const putBack = () => {
    if (started) return;
    started = true;
    if (--startingThreads === 0) setFlagsFromString(`--max-semi-space-size=${processMb}`);
  };
  const w = new Worker(url);
  w.once('online', putBack);
  w.once('exit', putBack);
  return w;
}

/** Threads that have had nothing to do for this long end; the next request starts them again. */
export const THREAD_IDLE_MS = 30_000;

/**
 * Decodes in up to `threads` worker threads, each request to the next thread in turn; small batches
 * inline. Threads start with the first request and end after `THREAD_IDLE_MS` without one, so an
 * agent whose caches are quiet holds no threads, and none outlive the agent's work.
 */
export function threadDecoder(threads: number): Decoder {
  const workers: (Worker | undefined)[] = Array.from({ length: threads }, () => undefined);
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let turn = 0;
  let closed = false;
  // Housekeeping of threads only (nothing observable depends on it), so the real clock and timers.
  let lastAsked = 0;
  let idleTimer: NodeJS.Timeout | undefined;

  const failAll = (i: number, error: unknown) => {
    for (const [id, p] of pending) {
      if (p.worker !== i) continue;
      pending.delete(id);
      p.reject(error);
    }
  };

  const spawn = (i: number): Worker => {
    const w = startDecodingThread(new URL('./decode-worker.ts', import.meta.url));
    w.unref();
    w.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new VendorError('unavailable', `decoding failed: ${m.error}`));
      else p?.resolve(m.result);
    });
    // A thread that dies takes its requests with it (their reflectors try again); the next request starts another.
    w.on('error', (e) => failAll(i, e));
    w.on('exit', () => {
      failAll(i, new VendorError('unavailable', 'a decoding thread ended'));
      if (workers[i] === w) workers[i] = undefined;
    });
    return w;
  };

  const endIdleThreads = () => {
    idleTimer = undefined;
    if (pending.size === 0 && Date.now() - lastAsked >= THREAD_IDLE_MS) {
      for (let i = 0; i < workers.length; i++) {
        const w = workers[i];
        workers[i] = undefined;
        void w?.terminate();
      }
      return;
    }
    idleTimer = setTimeout(endIdleThreads, THREAD_IDLE_MS).unref();
  };

  const ask = <T>(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<T> => {
    if (closed) return Promise.reject(new VendorError('unavailable', 'the decoder is closed'));
    const id = nextId++;
    const worker = turn++ % workers.length;
    const w = (workers[worker] ??= spawn(worker));
    lastAsked = Date.now();
    idleTimer ??= setTimeout(endIdleThreads, THREAD_IDLE_MS).unref();
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { worker, resolve: resolve as (v: unknown) => void, reject });
      w.postMessage({ ...message, id }, transfer);
    });
  };

  return {
    // A batch owns its ArrayBuffer (see the cluster client), so it moves to the thread without a copy.
    batch: (batch, info) =>
      batch.byteLength < THREAD_MIN_BYTES
        ? inlineDecoder.batch(batch, info)
        : ask({ op: 'batch', batch, info }, batch.byteOffset === 0 && batch.byteLength === batch.buffer.byteLength ? [batch.buffer as ArrayBuffer] : []),
    list: (body, info) => ask({ op: 'list', body, info }),
    close: async () => {
      closed = true;
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      for (const p of pending.values()) p.reject(new VendorError('unavailable', 'the decoder is closed'));
      pending.clear();
      await Promise.all(workers.map((w) => w?.terminate()));
    },
  };
}

/** Threads an agent decodes in: one per CPU beyond the first, at most 2; none on a single CPU. */
export function defaultDecoderThreads(): number {
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

const decoders = new WeakMap<object, Decoder>();

/** The one decoder of an agent (keyed by its context object), made on first use. */
export function decoderOf(owner: object, threads = defaultDecoderThreads()): Decoder {
  let d = decoders.get(owner);
  if (d === undefined) decoders.set(owner, (d = threads > 0 ? threadDecoder(threads) : inlineDecoder));
  return d;
}

/**
 * Closes the decoder of `owner`, if it has one: its threads end now rather than after
 * `THREAD_IDLE_MS` idle, which would outlive the agent that used them. A later `decoderOf` makes another.
 */
export async function closeDecoderOf(owner: object): Promise<void> {
  const d = decoders.get(owner);
  decoders.delete(owner);
  await d?.close();
}
