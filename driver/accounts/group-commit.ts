/**
 * Joins the index writes of settles that run at once into one run: the first caller starts a run at
 * once, callers that come while it runs wait together for the next one, which takes all of them (up
 * to `maxItems`). A lone settle pays nothing extra; a thousand settles at once make a few runs instead
 * of a thousand, each reading and writing its items in batches. Each caller's promise settles with the
 * run that carried its items, so a caller that awaits it knows they were written, as before.
 *
 * With `linger`, a run waits that long (on the injected clock) before it takes its callers, so that
 * callers arriving a few at a time off any waiting path are joined into fewer, larger runs.
 */
import type { Clock } from '../../shared/clock.ts';

interface Caller<T> {
  items: readonly T[];
  resolve(): void;
  reject(e: unknown): void;
}

export class GroupCommit<T> {
  readonly #run: (items: readonly T[]) => Promise<void>;
  readonly #maxItems: number;
  #queued: Caller<T>[] = [];
  #running = false;
  readonly #linger: { clock: Clock; ms: number } | undefined;

  constructor(run: (items: readonly T[]) => Promise<void>, maxItems = 500, linger?: { clock: Clock; ms: number }) {
    this.#run = run;
    this.#maxItems = maxItems;
    this.#linger = linger;
  }

  add(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.#queued.push({ items, resolve, reject }));
    if (!this.#running) void this.#drain();
    return done;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queued.length > 0) {
      if (this.#linger !== undefined) await this.#linger.clock.sleep(this.#linger.ms);
      const group = this.#take();
      try {
        await this.#run(group.flatMap((c) => c.items));
        for (const c of group) c.resolve();
      } catch (e) {
        for (const c of group) c.reject(e);
      }
    }
    this.#running = false;
  }

  /** Whole callers up to `maxItems` items, and at least one caller however many items it brings. */
  #take(): Caller<T>[] {
    let items = 0;
    let n = 0;
    while (n < this.#queued.length && (n === 0 || items + (this.#queued[n] as Caller<T>).items.length <= this.#maxItems)) {
      items += (this.#queued[n] as Caller<T>).items.length;
      n++;
    }
    return this.#queued.splice(0, n);
  }
}
