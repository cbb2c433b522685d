/**
 * Where watch lines and list pages are decoded. Parsing the JSON the API server sends is most of the
 * cache's work (a realistic pod is 6 KB of JSON), so an agent with more than one CPU decodes in
 * threads of its own while the main thread reads the network and talks to the driver. The order of
 * one scope's events is kept by its reflector, which takes the answers in the order it asked.
 */
import { availableParallelism } from 'node:os';
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

/** The young generation of a decoding thread: V8's default for a 16 MiB semi-space. */
const DECODER_YOUNG_GENERATION_MB = 48;

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
    // Parsing a list page makes megabytes of objects at once, so the thread asks for V8's default young
    // generation. A process-wide --max-semi-space-size (the agent's image sets 2 MiB) takes precedence
    // over this limit in V8, so it holds only where the process runs without that flag (docs/cache.md).
    const w = new Worker(new URL('./decode-worker.ts', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: DECODER_YOUNG_GENERATION_MB } });
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
