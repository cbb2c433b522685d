/**
 * The activation's check that an agent session is live in a zone (docs/api.md, PATCH), kept for a
 * moment: a zone found live is taken as live again for `LIVE_ZONE_CACHE_MS` while one of the
 * sessions read then still has its lease running, so activations that follow one another (a script
 * activating accounts one by one) read the session items once, not once each. A zone found without
 * a live session is never kept: an agent that has just connected is seen at once.
 *
 * The read it stands for is an eventually consistent Query already, so a session that ended a moment
 * ago may pass it as well; the second this keeps is of that order. Nothing depends on the check for
 * safety: the driver hands the account to whoever is live when it settles it.
 */
import type { Clock } from '../../shared/clock.ts';
import type { Session } from '../../shared/table/agents/sessions.ts';

/** How long a zone found live is taken as live (while a lease read then still runs). */
export const LIVE_ZONE_CACHE_MS = 1_000;
/** Zones kept at most; the oldest goes first. */
const MAX_ZONES = 1_000;

export class LiveZones {
  readonly #clock: Clock;
  readonly #cacheMs: number;
  readonly #zones = new Map<string, { at: number; leaseUntil: number }>();

  constructor(clock: Clock, cacheMs = LIVE_ZONE_CACHE_MS) {
    this.#clock = clock;
    this.#cacheMs = cacheMs;
  }

  /** Whether `zone` (undefined: any zone) was found live within the cache time and a lease read then still runs. */
  known(zone: string | undefined): boolean {
    const key = zone ?? '';
    const entry = this.#zones.get(key);
    if (entry === undefined) return false;
    const now = this.#clock.now();
    if (now - entry.at < this.#cacheMs && entry.leaseUntil > now) return true;
    this.#zones.delete(key);
    return false;
  }

  /** What a fresh read of the zone's live sessions found (read at `at`). */
  found(zone: string | undefined, at: number, sessions: readonly Session[]): void {
    const key = zone ?? '';
    this.#zones.delete(key);
    if (sessions.length === 0) return;
    this.#zones.set(key, { at, leaseUntil: Math.max(...sessions.map((s) => s.leaseExpiresAt)) });
    if (this.#zones.size > MAX_ZONES) this.#zones.delete(this.#zones.keys().next().value as string);
  }
}
