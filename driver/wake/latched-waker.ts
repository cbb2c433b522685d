import type { Clock } from '../../shared/clock.ts';
import { Waker } from '../../shared/waker.ts';

/**
 * A waker that keeps a wake that came while its loop was busy: the loop's next wait returns at once.
 * Wakes while the loop waits, or while one is kept, add nothing: any number of them cost one run.
 */
export class LatchedWaker {
  readonly #inner = new Waker();
  #waiting = false;
  #kept = false;

  wake(): void {
    if (this.#waiting) this.#inner.wake();
    else this.#kept = true;
  }

  async wait(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (this.#kept) {
      this.#kept = false;
      return;
    }
    this.#waiting = true;
    try {
      await this.#inner.wait(clock, ms, signal);
    } finally {
      this.#waiting = false;
    }
  }
}
