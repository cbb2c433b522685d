/**
 * Runs one stream's messages of a kind that concerns one key each (an account) side by side: one at a
 * time per key, in arrival order, and at most `limit` at once, so a stream's answers for a thousand
 * accounts do not each wait for the table behind the one before. `start` resolves once the task has a
 * slot (the caller, the stream's serial queue, waits there: a full runner pushes back on the peer);
 * `idle` resolves when every started task has finished (a message of another kind waits for that, so
 * it still sees everything sent before it as done).
 *
 * Acknowledgements are cumulative, so a message is acknowledged only once it and every keyed message
 * before it are done: `start` and `finish` keep track, and `finish` answers the highest sequence
 * number that may be acknowledged now.
 */
export class KeyedRunner {
  readonly #limit: number;
  readonly #tails = new Map<string, Promise<void>>();
  readonly #running = new Set<Promise<void>>();
  /** Sequence numbers started and not finished, and finished ones above the lowest of those. */
  readonly #open = new Set<number>();
  readonly #finished: number[] = [];
  readonly #onError: (error: unknown) => void;

  constructor(limit: number, onError: (error: unknown) => void) {
    this.#limit = limit;
    this.#onError = onError;
  }

  /** Starts `task` after the key's earlier tasks; resolves when it is under way (not when it is done). */
  async start(key: string, seq: number, task: () => Promise<void>): Promise<void> {
    while (this.#running.size >= this.#limit) await Promise.race(this.#running);
    if (seq > 0) this.#open.add(seq);
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run: Promise<void> = previous.then(task).catch((e: unknown) => this.#onError(e));
    this.#tails.set(key, run);
    this.#running.add(run);
    void run.finally(() => {
      this.#running.delete(run);
      if (this.#tails.get(key) === run) this.#tails.delete(key);
    });
  }

  /** Every task started so far has finished. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  /** Message `seq` is done: the highest sequence number every keyed message up to which is done, if it rose. */
  finish(seq: number): number | undefined {
    if (!this.#open.delete(seq)) return undefined;
    this.#finished.push(seq);
    const lowestOpen = Math.min(...this.#open);
    const done = this.#finished.filter((s) => s < lowestOpen);
    if (done.length === 0) return undefined;
    this.#finished.splice(0, this.#finished.length, ...this.#finished.filter((s) => s > lowestOpen));
    return Math.max(...done);
  }
}
