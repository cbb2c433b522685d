/**
 * Waits that grow while the table keeps failing, so a driver whose table is gone does not keep
 * asking at its normal pace: `baseMs` after the first failure, doubling up to `maxMs`, each taken
 * between half and the whole of it so that replicas and streams do not retry in step. A success
 * starts over.
 */
import { isVendorError } from '../shared/errors.ts';
import { isTableUnavailable } from '../shared/table/unavailable.ts';

/** The longest a driver waits between two tries of a table that keeps failing. */
export const STORE_BACKOFF_MAX_MS = 5_000;

export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;
  #failures = 0;

  constructor(baseMs: number, maxMs: number, random: () => number = Math.random) {
    this.#baseMs = Math.max(1, baseMs);
    this.#maxMs = Math.max(this.#baseMs, maxMs);
    this.#random = random;
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.#failures;
  }

  /** Counts one more failure; the wait before the next try. */
  failed(): number {
    const ms = Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(this.#failures, 30));
    this.#failures++;
    return ms / 2 + (this.#random() * ms) / 2;
  }

  succeeded(): void {
    this.#failures = 0;
  }
}

/** The table did not answer (down, slow, throttling): worth trying the same thing again later. */
export function isStoreOutage(e: unknown): boolean {
  return isTableUnavailable(e) || (isVendorError(e) && e.code === 'unavailable' && isTableUnavailable(e.cause));
}
