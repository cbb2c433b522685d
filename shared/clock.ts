/**
 * Time as every component sees it. Leases, backoff and expiry read `now()` and wait with
 * `sleep()`, so tests drive them with a manual clock instead of waiting for real.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  // Not `timers/promises`: its abort makes a new AbortError (with a stack trace) each time, and loops
  // that wait until woken (one wake per message sent) abort a sleep per message.
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

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
