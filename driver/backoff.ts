/**
 * Waits that grow while the table keeps failing, so a driver whose table is gone does not keep
 * asking at its normal pace: `baseMs` after the first failure, doubling up to `maxMs`, each taken
 * between half and the whole of it so that replicas and streams do not retry in step. A success
 * starts over.
 */
import { Backoff, type Random } from '../shared/backoff.ts';
import { isVendorError } from '../shared/errors.ts';
import { isTableUnavailable } from '../shared/table/core/unavailable.ts';

/** The longest a driver waits between two tries of a table that keeps failing. */
export const STORE_BACKOFF_MAX_MS = 5_000;

/**
 * The backoff of a loop that asks the table: `baseMs` doubling to `maxMs` (at least 1 ms, and never a
 * cap below the base), each wait between half and the whole.
 */
export function storeBackoff(baseMs: number, maxMs: number, random?: Random): Backoff {
  const base = Math.max(1, baseMs);
  return new Backoff({ baseMs: base, maxMs: Math.max(base, maxMs), jitter: [0.5, 1] }, random);
}

/** The table did not answer (down, slow, throttling): worth trying the same thing again later. */
export function isStoreOutage(e: unknown): boolean {
  return isTableUnavailable(e) || (isVendorError(e) && e.code === 'unavailable' && isTableUnavailable(e.cause));
}
