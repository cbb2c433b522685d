/**
 * What a replica checks of a signed wake before it acts on it (docs/protocol.md#6b-wakes): that it
 * was made within `maxAgeMs` of now, that its nonce was not seen before, and that datagrams do not
 * come faster than `maxPerSecond`.
 */

export type WakeRefusal = 'stale' | 'replayed' | 'rate_limited';

/** Datagrams taken per second, as a bucket of `perSecond` tokens refilled continuously. */
export class DatagramRate {
  readonly #perSecond: number;
  #tokens: number;
  #at: number;

  constructor(perSecond: number, now: number) {
    this.#perSecond = perSecond;
    this.#tokens = perSecond;
    this.#at = now;
  }

  take(now: number): boolean {
    this.#tokens = Math.min(this.#perSecond, this.#tokens + ((now - this.#at) / 1000) * this.#perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/**
 * Nonces of the wakes taken, each kept until its wake is too old to be taken anyway; at most
 * `limit`, so a flood of valid wakes (the secret leaked) cannot grow memory without bound: when full,
 * wakes are refused until old nonces expire.
 */
export class NonceWindow {
  readonly #maxAgeMs: number;
  readonly #limit: number;
  /** Nonce → the wake's own time; in insertion order, which is close to time order. */
  readonly #seen = new Map<string, number>();

  constructor(maxAgeMs: number, limit: number) {
    this.#maxAgeMs = maxAgeMs;
    this.#limit = limit;
  }

  /** Undefined when a wake made `at` with `nonce` may be acted on at `now` (and remembers it), else why not. */
  admit(nonce: string, at: number, now: number): WakeRefusal | undefined {
    if (Math.abs(now - at) > this.#maxAgeMs) return 'stale';
    this.#forget(now);
    if (this.#seen.has(nonce)) return 'replayed';
    if (this.#seen.size >= this.#limit) return 'rate_limited';
    this.#seen.set(nonce, at);
    return undefined;
  }

  #forget(now: number): void {
    for (const [nonce, at] of this.#seen) {
      if (now - at <= this.#maxAgeMs) break;
      this.#seen.delete(nonce);
    }
  }

  get size(): number {
    return this.#seen.size;
  }
}
