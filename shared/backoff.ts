/**
 * The waits of every loop that tries again after a failure. Each loop keeps its own numbers (a
 * `BackoffPolicy`); this module only says how they turn into a wait, so that the rule is written once:
 * `baseMs` after the first failure, multiplied by `factor` for each further one (at most `maxSteps`
 * times) and never past `maxMs`, then spread over `jitter` so that many writers or replicas failing
 * together do not try again in step. The random source is injected so tests choose the draw; the wait
 * itself is slept with the caller's injected `Clock`.
 */

/** Uniform in [0, 1). */
export type Random = () => number;

export interface BackoffPolicy {
  /** The wait after the first failure, before jitter. */
  baseMs: number;
  /** No wait grows past this, before jitter. */
  maxMs: number;
  /** Each further failure multiplies the wait by this; 2 when not given. */
  factor?: number;
  /** The wait stops growing after this many multiplications; 30 when not given. */
  maxSteps?: number;
  /**
   * The wait is the grown one times a factor drawn uniformly from `[low, high)`: `[0.5, 1]` waits
   * between half and the whole, `[0, 1]` anything up to the whole. No jitter (and no draw) when not given.
   */
  jitter?: readonly [low: number, high: number];
  /** Whole milliseconds. */
  round?: boolean;
}

/** The wait before the next try after `failures` failures in a row (1 for the first). */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: Random = Math.random): number {
  const steps = Math.min(Math.max(0, failures - 1), policy.maxSteps ?? 30);
  const ms = Math.min(policy.maxMs, policy.baseMs * (policy.factor ?? 2) ** steps);
  const [low, high] = policy.jitter ?? [1, 1];
  // Written as low part plus drawn part so that `[0.5, 1]` gives exactly `ms / 2 + random() * ms / 2`.
  const wait = low === high ? ms * low : ms * low + random() * ms * (high - low);
  return policy.round === true ? Math.round(wait) : wait;
}

/** Counts failures in a row and answers the wait before the next try; a success starts over. */
export class Backoff {
  readonly policy: BackoffPolicy;
  readonly #random: Random;
  #failures = 0;

  constructor(policy: BackoffPolicy, random: Random = Math.random) {
    this.policy = policy;
    this.#random = random;
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.#failures;
  }

  /** Counts one more failure; the wait before the next try. */
  failed(): number {
    this.#failures++;
    return backoffDelay(this.policy, this.#failures, this.#random);
  }

  succeeded(): void {
    this.#failures = 0;
  }
}
