/**
 * Reads the assignment work feed (shared/table/changes.ts) for one replica. Each read starts
 * `clockSkewMs` before the newest entry already seen (never ahead of this replica's own clock), so
 * an entry from a writer whose clock lags, or whose write landed late, is still found; entries
 * already seen are skipped. An entry older than that window is missed here and repaired by the
 * periodic full reconcile.
 */
import type { Clock } from '../../shared/clock.ts';
import { changesSince, cursorAt } from '../../shared/table/changes.ts';
import type { TableRef } from '../../shared/table/client.ts';
import { changeKey } from '../../shared/table/keys.ts';

export class FeedReader {
  readonly #table: TableRef;
  readonly #clock: Clock;
  readonly #skewMs: number;
  readonly #seen = new Map<string, number>();
  #newest: number;

  constructor(table: TableRef, clock: Clock, skewMs: number) {
    this.#table = table;
    this.#clock = clock;
    this.#skewMs = skewMs;
    // What happened before this replica started is covered by its first full reconcile.
    this.#newest = clock.now();
  }

  /** Names of the accounts with entries not seen before. */
  async poll(): Promise<string[]> {
    const from = Math.min(this.#newest, this.#clock.now()) - this.#skewMs;
    const names = new Set<string>();
    let cursor = cursorAt(Math.max(0, from));
    for (;;) {
      const page = await changesSince(this.#table, cursor, 100);
      for (const c of page.changes) {
        const key = changeKey(c.at, c.name, c.generation).sk;
        if (this.#seen.has(key)) continue;
        this.#seen.set(key, c.at);
        names.add(c.name);
        this.#newest = Math.max(this.#newest, c.at);
      }
      if (page.changes.length < 100) break;
      cursor = page.cursor;
    }
    const horizon = Math.min(this.#newest, this.#clock.now()) - this.#skewMs;
    for (const [key, at] of this.#seen) if (at < horizon) this.#seen.delete(key);
    return [...names];
  }
}
