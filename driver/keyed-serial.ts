/**
 * Runs tasks one at a time per key and concurrently across keys: the messages of an agent stream that
 * each concern one account (cache messages, docs/cache.md#the-drivers-side; assignment answers,
 * docs/protocol.md) are handled in order within an account, while different accounts no longer wait
 * for each other's table reads.
 *
 * Bounded twice: at most `running` tasks run at once, and at most `perSource` tasks of one source (a
 * stream) wait or run; `admit` waits for room, which is how a stream whose messages pile up stops
 * being read (its handler does not return, so its serial queue fills and pauses the stream).
 */
export interface KeyedSerialOptions {
  /** Tasks running at once, over every key. */
  running: number;
  /** Tasks of one source waiting or running at once. */
  perSource: number;
}

interface Task {
  source: object;
  run: () => Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class KeyedSerial {
  readonly #o: KeyedSerialOptions;
  /** Per key, its tasks in arrival order; the first is running or ready to run. */
  readonly #queues = new Map<string, Task[]>();
  /** Keys whose first task may start once a running slot is free, in the order they became ready. */
  readonly #ready: string[] = [];
  readonly #perSource = new WeakMap<object, { count: number; room: (() => void)[] }>();
  #running = 0;

  constructor(options: KeyedSerialOptions) {
    this.#o = { running: Math.max(1, options.running), perSource: Math.max(1, options.perSource) };
  }

  /** Tasks waiting or running. */
  get size(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.length;
    return n;
  }

  /**
   * Waits until `source` may add a task, then queues `run` behind the key's earlier tasks. Resolves
   * with the task's completion (which settles when `run` does).
   */
  async admit(source: object, key: string, run: () => Promise<void>): Promise<{ done: Promise<void> }> {
    const s = this.#sourceOf(source);
    while (s.count >= this.#o.perSource) await new Promise<void>((r) => s.room.push(r));
    s.count++;
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    let queue = this.#queues.get(key);
    if (queue === undefined) this.#queues.set(key, (queue = []));
    queue.push({ source, run, resolve, reject });
    if (queue.length === 1) this.#ready.push(key);
    this.#pump();
    return { done };
  }

  #sourceOf(source: object): { count: number; room: (() => void)[] } {
    let s = this.#perSource.get(source);
    if (s === undefined) this.#perSource.set(source, (s = { count: 0, room: [] }));
    return s;
  }

  #pump(): void {
    while (this.#running < this.#o.running && this.#ready.length > 0) {
      const key = this.#ready.shift()!;
      const task = this.#queues.get(key)![0]!;
      this.#running++;
      void task.run().then(task.resolve, task.reject).finally(() => this.#finished(key, task));
    }
  }

  #finished(key: string, task: Task): void {
    this.#running--;
    const queue = this.#queues.get(key)!;
    queue.shift();
    if (queue.length === 0) this.#queues.delete(key);
    else this.#ready.push(key);
    const s = this.#sourceOf(task.source);
    s.count--;
    s.room.shift()?.();
    this.#pump();
  }
}
