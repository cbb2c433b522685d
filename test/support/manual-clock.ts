import type { Clock } from '../../shared/clock.ts';

/** A clock that moves only when told to; `sleep` resolves once `advance` passes its deadline. */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: { until: number; resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper = { until: this.#now + ms, resolve, reject };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Moves time forward and wakes every sleeper whose deadline has passed, in deadline order. */
  async advance(ms: number): Promise<void> {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#now).sort((a, b) => a.until - b.until);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#now);
    for (const s of due) s.resolve();
    // Let the woken tasks run before the caller looks at their effects.
    await new Promise((r) => setImmediate(r));
  }

  get pendingSleeps(): number {
    return this.#sleepers.length;
  }
}
