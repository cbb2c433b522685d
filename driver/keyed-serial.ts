/**
 * Runs tasks one at a time per key and concurrently across keys: the messages of an agent stream that
 * each concern one account (cache messages, docs/cache.md#the-drivers-side; assignment answers,
 * docs/protocol.md) are handled in order within an account, while different accounts no longer wait
 * for each other's table reads.
 *
 * Bounded in three ways, each per source (a stream): its tasks waiting or running (`perSource`, and
 * past it as many more as `morePerSource` grants for what the source holds), those of one of its keys
 * (`perKey`), and their bytes (`perSourceBytes`). `admit` waits for room, which is how a stream whose
 * messages pile up stops being read (its handler does not return, so its serial queue fills and
 * pauses the stream). With
 * `perKey` below `perSource`, a few keys whose tasks are stuck fill only their own share, and the
 * stream's other keys go on. At most `running` tasks run at once over every source; a task that
 * waits for time alone (a retry's backoff) gives its place up meanwhile (`Slot.idle`), so keys that
 * wait out a slow table hold back no other key.
 */
export interface KeyedSerialOptions<S extends object = object> {
  /** Tasks running at once, over every key. */
  running: number;
  /** Tasks of one source waiting or running at once. */
  perSource: number;
  /** Tasks a source may have past `perSource`; asked only then, so it may take time to count. */
  morePerSource?: (source: S) => number;
  /** Tasks of one source and one key waiting or running at once; no bound of its own when absent. */
  perKey?: number;
  /** Bytes of one source's tasks waiting or running at once (as `admit` is told); one task alone always fits. */
  perSourceBytes?: number;
  /** Told once for each task that has to wait for room, of the bound it first met. */
  onWait?: (bound: WaitBound) => void;
}

/** The bound a task waits on: its source's count, its key's within the source, or the source's bytes. */
export type WaitBound = 'source' | 'key' | 'bytes';

/** What a running task is given. */
export interface Slot {
  /** Waits for `waiting` without a running place (the key stays this task's), then takes one again. */
  idle<T>(waiting: Promise<T>): Promise<T>;
}

interface Task {
  source: object;
  bytes: number;
  run: (slot: Slot) => Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

interface SourceState {
  count: number;
  bytes: number;
  perKey: Map<string, number>;
  room: (() => void)[];
}

export class KeyedSerial<S extends object = object> {
  readonly #running: number;
  readonly #perSource: number;
  readonly #morePerSource: ((source: S) => number) | undefined;
  readonly #perKey: number;
  readonly #perSourceBytes: number;
  readonly #onWait: ((bound: WaitBound) => void) | undefined;
  /** Per key, its tasks in arrival order; the first is running, idle or ready to run. */
  readonly #queues = new Map<string, Task[]>();
  /** Keys whose first task may start once a running place is free, in the order they became ready. */
  readonly #ready: string[] = [];
  /** Tasks back from idling, waiting for a running place: they go before tasks not yet started. */
  readonly #regaining: (() => void)[] = [];
  readonly #sources = new WeakMap<object, SourceState>();
  #busy = 0;

  constructor(options: KeyedSerialOptions<S>) {
    this.#running = Math.max(1, options.running);
    this.#perSource = Math.max(1, options.perSource);
    this.#morePerSource = options.morePerSource;
    this.#perKey = Math.max(1, options.perKey ?? Infinity);
    this.#perSourceBytes = options.perSourceBytes ?? Infinity;
    this.#onWait = options.onWait;
  }

  /** Tasks waiting or running. */
  get size(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.length;
    return n;
  }

  /** Tasks holding a running place now. */
  get running(): number {
    return this.#busy;
  }

  /**
   * Waits until `source` may add a task of `key` (and `bytes`), then queues `run` behind the key's
   * earlier tasks. Resolves with the task's completion (which settles when `run` does).
   */
  async admit(source: S, key: string, run: (slot: Slot) => Promise<void>, bytes = 0): Promise<{ done: Promise<void> }> {
    const s = this.#sourceOf(source);
    let bound = this.#bound(source, s, key, bytes);
    if (bound !== undefined) this.#onWait?.(bound);
    while (bound !== undefined) {
      await new Promise<void>((r) => s.room.push(r));
      bound = this.#bound(source, s, key, bytes);
    }
    s.count++;
    s.bytes += bytes;
    s.perKey.set(key, (s.perKey.get(key) ?? 0) + 1);
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    let queue = this.#queues.get(key);
    if (queue === undefined) this.#queues.set(key, (queue = []));
    queue.push({ source, bytes, run, resolve, reject });
    if (queue.length === 1) this.#ready.push(key);
    this.#pump();
    return { done };
  }

  /** The bound a task of `key` and `bytes` would go past now, if any. */
  #bound(source: S, s: SourceState, key: string, bytes: number): WaitBound | undefined {
    // The grant is asked for only past the base bound, where it may be worth its count.
    if (s.count >= this.#perSource && s.count >= this.#perSource + (this.#morePerSource?.(source) ?? 0)) return 'source';
    if ((s.perKey.get(key) ?? 0) >= this.#perKey) return 'key';
    return s.count === 0 || s.bytes + bytes <= this.#perSourceBytes ? undefined : 'bytes';
  }

  #sourceOf(source: object): SourceState {
    let s = this.#sources.get(source);
    if (s === undefined) this.#sources.set(source, (s = { count: 0, bytes: 0, perKey: new Map(), room: [] }));
    return s;
  }

  #pump(): void {
    while (this.#busy < this.#running) {
      const regain = this.#regaining.shift();
      if (regain !== undefined) {
        this.#busy++;
        regain();
        continue;
      }
      const key = this.#ready.shift();
      if (key === undefined) return;
      const task = this.#queues.get(key)![0]!;
      this.#busy++;
      let finished = false;
      const slot: Slot = {
        idle: async (waiting) => {
          if (finished) return waiting;
          this.#busy--;
          this.#pump();
          try {
            return await waiting;
          } finally {
            await this.#regain();
          }
        },
      };
      void task
        .run(slot)
        .then(task.resolve, task.reject)
        .finally(() => {
          finished = true;
          this.#finished(key, task);
        });
    }
  }

  /** A running place again for a task back from idling, before any task not yet started. */
  #regain(): Promise<void> {
    if (this.#busy < this.#running && this.#regaining.length === 0) {
      this.#busy++;
      return Promise.resolve();
    }
    return new Promise<void>((r) => {
      this.#regaining.push(r);
      this.#pump();
    });
  }

  #finished(key: string, task: Task): void {
    this.#busy--;
    const queue = this.#queues.get(key)!;
    queue.shift();
    if (queue.length === 0) this.#queues.delete(key);
    else this.#ready.push(key);
    const s = this.#sourceOf(task.source);
    s.count--;
    s.bytes -= task.bytes;
    const left = (s.perKey.get(key) ?? 1) - 1;
    if (left === 0) s.perKey.delete(key);
    else s.perKey.set(key, left);
    // Each waiter checks its own bounds again; the one that still does not fit waits on.
    for (const wake of s.room.splice(0)) wake();
    this.#pump();
  }
}
