import type { Clock } from './clock.ts';

/**
 * Lets a loop that sleeps until its next deadline be woken early when something changes the
 * deadlines. `wait` returns when woken, when `ms` has passed on the clock, or when `signal` aborts;
 * it leaves no sleeper behind.
 */
/**
 * The reason a finished wait aborts its sleep with. Without one, every abort makes a DOMException
 * (with its stack trace): a cost per message on loops woken for each one.
 */
const WAIT_OVER = new Error('the wait is over');

export class Waker {
  #wake: (() => void) | undefined;

  wake(): void {
    this.#wake?.();
  }

  async wait(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const done = new AbortController();
    const onAbort = () => done.abort(WAIT_OVER);
    signal.addEventListener('abort', onAbort, { once: true });
    const woken = new Promise<void>((resolve) => {
      this.#wake = resolve;
      done.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([woken, ...(Number.isFinite(ms) ? [clock.sleep(Math.max(0, ms), done.signal).catch(() => undefined)] : [])]);
    } finally {
      this.#wake = undefined;
      done.abort(WAIT_OVER);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
