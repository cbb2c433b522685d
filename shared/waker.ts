import type { Clock } from './clock.ts';

/**
 * Lets a loop that sleeps until its next deadline be woken early when something changes the
 * deadlines. `wait` returns when woken, when `ms` has passed on the clock, or when `signal` aborts;
 * it leaves no sleeper behind.
 */
export class Waker {
  #wake: (() => void) | undefined;

  wake(): void {
    this.#wake?.();
  }

  async wait(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const done = new AbortController();
    const onAbort = () => done.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const woken = new Promise<void>((resolve) => {
      this.#wake = resolve;
      done.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([woken, ...(Number.isFinite(ms) ? [clock.sleep(Math.max(0, ms), done.signal).catch(() => undefined)] : [])]);
    } finally {
      this.#wake = undefined;
      done.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }
}
