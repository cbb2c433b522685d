/**
 * What a replica knows of results for the API's result asks (docs/protocol.md#6b-wakes): the
 * operations that finished through it (an agent's result recorded, a time-out), each kept for
 * `keepMs` so an ask that comes just after the result is answered at once, and the asks waiting for
 * one. Bounded on both sides: at most `maxKept` ids remembered, at most `maxWaiters` asks held.
 */
import type { Clock } from '../../shared/clock.ts';

/** How long a finished operation is remembered for asks that come after its result. */
export const RESULT_NEWS_KEEP_MS = 60_000;
/** At most this many finished operations remembered; the oldest go first. */
export const RESULT_NEWS_MAX_KEPT = 20_000;

export class ResultNews {
  readonly #clock: Clock;
  readonly #keepMs: number;
  readonly #maxKept: number;
  /** Operation id → when it finished here, in insertion order. */
  readonly #finished = new Map<string, number>();
  readonly #waiters = new Map<string, Set<() => void>>();
  #waiting = 0;

  constructor(clock: Clock, keepMs = RESULT_NEWS_KEEP_MS, maxKept = RESULT_NEWS_MAX_KEPT) {
    this.#clock = clock;
    this.#keepMs = keepMs;
    this.#maxKept = maxKept;
  }

  /** Operation `id` finished through this replica: the asks waiting for it are answered now. */
  finished(id: string): void {
    const now = this.#clock.now();
    this.#finished.delete(id);
    this.#finished.set(id, now);
    for (const [old, at] of this.#finished) {
      if (this.#finished.size <= this.#maxKept && now - at <= this.#keepMs) break;
      this.#finished.delete(old);
    }
    const waiting = this.#waiters.get(id);
    if (waiting === undefined) return;
    this.#waiters.delete(id);
    for (const wake of waiting) wake();
  }

  /** Whether `id` finished here within `keepMs`. */
  finishedHere(id: string): boolean {
    const at = this.#finished.get(id);
    return at !== undefined && this.#clock.now() - at <= this.#keepMs;
  }

  /** Asks held now. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Resolves true once `id` has finished here, false after `waitMs` or when `signal` aborts. */
  async until(id: string, waitMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.finishedHere(id)) return true;
    if (waitMs <= 0 || signal.aborted) return false;
    let done!: () => void;
    const news = new Promise<void>((resolve) => (done = resolve));
    let set = this.#waiters.get(id);
    if (set === undefined) this.#waiters.set(id, (set = new Set()));
    set.add(done);
    this.#waiting++;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([news, this.#clock.sleep(waitMs, stop.signal).catch(() => undefined)]);
      return this.finishedHere(id);
    } finally {
      this.#waiting--;
      stop.abort();
      signal.removeEventListener('abort', onAbort);
      set.delete(done);
      if (set.size === 0 && this.#waiters.get(id) === set) this.#waiters.delete(id);
    }
  }
}
