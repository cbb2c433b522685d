/**
 * What a replica knows of results for the API's result asks (docs/protocol.md#6b-wakes): the
 * operations that finished through it (an agent's result recorded, a time-out), each kept for
 * `keepMs` so an ask that comes just after the result is answered at once, with the body that
 * answers it (shared/wake/result-answer.ts), and the asks waiting for one. Bounded on every side: at
 * most `maxKept` ids remembered, at most `maxBodyBytes` of bodies (the oldest lose theirs first and
 * are answered without), at most `maxWaiters` asks held.
 */
import type { Clock } from '../../shared/clock.ts';

/** How long a finished operation is remembered for asks that come after its result. */
export const RESULT_NEWS_KEEP_MS = 60_000;
/** At most this many finished operations remembered; the oldest go first. */
export const RESULT_NEWS_MAX_KEPT = 20_000;
/** At most this many characters of answer bodies kept; the oldest are dropped first. */
export const RESULT_NEWS_MAX_BODY_CHARS = 16 * 1024 * 1024;

interface Finished {
  at: number;
  body: string | undefined;
}

export class ResultNews {
  readonly #clock: Clock;
  readonly #keepMs: number;
  readonly #maxKept: number;
  readonly #maxBodyChars: number;
  /** Operation id → when it finished here and its answer, in insertion order. */
  readonly #finished = new Map<string, Finished>();
  #bodyChars = 0;
  readonly #waiters = new Map<string, Set<() => void>>();
  #waiting = 0;

  constructor(clock: Clock, keepMs = RESULT_NEWS_KEEP_MS, maxKept = RESULT_NEWS_MAX_KEPT, maxBodyChars = RESULT_NEWS_MAX_BODY_CHARS) {
    this.#clock = clock;
    this.#keepMs = keepMs;
    this.#maxKept = maxKept;
    this.#maxBodyChars = maxBodyChars;
  }

  /**
   * Operation `id` finished through this replica (its finish is in the table): the asks waiting for it
   * are answered now, with `body` when given.
   */
  finished(id: string, body?: string): void {
    const now = this.#clock.now();
    this.#forget(id);
    this.#finished.set(id, { at: now, body });
    this.#bodyChars += body?.length ?? 0;
    for (const [old, f] of this.#finished) {
      if (this.#finished.size <= this.#maxKept && now - f.at <= this.#keepMs) break;
      this.#forget(old);
    }
    for (const f of this.#finished.values()) {
      if (this.#bodyChars <= this.#maxBodyChars) break;
      this.#bodyChars -= f.body?.length ?? 0;
      f.body = undefined;
    }
    const waiting = this.#waiters.get(id);
    if (waiting === undefined) return;
    this.#waiters.delete(id);
    for (const wake of waiting) wake();
  }

  #forget(id: string): void {
    this.#bodyChars -= this.#finished.get(id)?.body?.length ?? 0;
    this.#finished.delete(id);
  }

  /** Whether `id` finished here within `keepMs`. */
  finishedHere(id: string): boolean {
    const f = this.#finished.get(id);
    return f !== undefined && this.#clock.now() - f.at <= this.#keepMs;
  }

  /** The body that answers asks for `id`, when it finished here within `keepMs` and its body is kept. */
  answerOf(id: string): string | undefined {
    return this.finishedHere(id) ? this.#finished.get(id)?.body : undefined;
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
