/**
 * Reads the assignment work feed (shared/table/accounts/feed.ts) for one replica. Each read starts
 * `clockSkewMs` before the newest entry already seen (never ahead of this replica's own clock), so
 * an entry from a writer whose clock lags, or whose write landed late, is still found; entries
 * already seen are skipped. An entry older than that window is missed here and repaired by the
 * periodic full reconcile. An entry read before the account write it announces has landed (the API
 * appends an activation's entry alongside its write) is read again (`behind`), so it is not missed.
 */
import type { Clock } from '../../shared/clock.ts';
import { changeKeysSince, cursorAt, type Change } from '../../shared/table/accounts/feed.ts';
import { changeKey } from '../../shared/table/accounts/keys.ts';
import type { TableRef } from '../../shared/table/core/client.ts';

/**
 * Entries per read (a Query of each feed shard, merged). A burst (a PATCH of 1,000 accounts) stays inside the re-read window for
 * `clockSkewMs`, so every poll in that time reads it again: large pages keep that to a few round
 * trips (DynamoDB returns at most 1 MB per page; an entry is about 120 bytes).
 */
const PAGE = 1000;

export class FeedReader {
  readonly #table: TableRef;
  readonly #clock: Clock;
  readonly #skewMs: number;
  readonly #seen = new Map<string, number>();
  /** Per account, the newest entry read: its key, time and generation (for `behind`). */
  readonly #latest = new Map<string, { sk: string; at: number; generation: number }>();
  readonly #onPickup: ((lagMs: number) => void) | undefined;
  #newest: number;

  /** `onPickup` hears, for each entry read for the first time, how long after its write that was. */
  constructor(table: TableRef, clock: Clock, skewMs: number, onPickup?: (lagMs: number) => void) {
    this.#table = table;
    this.#onPickup = onPickup;
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
      const page = await changeKeysSince(this.#table, cursor, PAGE);
      for (const c of page.keys) {
        if (this.#seen.has(c.sk)) continue;
        this.#seen.set(c.sk, c.at);
        if ((this.#latest.get(c.name)?.generation ?? -1) <= c.generation) this.#latest.set(c.name, { sk: c.sk, at: c.at, generation: c.generation });
        this.#onPickup?.(Math.max(0, this.#clock.now() - c.at));
        names.add(c.name);
        this.#newest = Math.max(this.#newest, c.at);
      }
      if (!page.more) break;
      cursor = page.cursor;
    }
    const horizon = Math.min(this.#newest, this.#clock.now()) - this.#skewMs;
    for (const [key, at] of this.#seen) if (at < horizon) this.#seen.delete(key);
    for (const [name, e] of this.#latest) if (e.at < horizon) this.#latest.delete(name);
    return [...names];
  }

  /**
   * This replica appended the entry itself, from the item it had just written: reading it back would
   * only read that item again, so the entry counts as seen (every other replica still reads it).
   */
  wrote(change: Change): void {
    const { sk } = changeKey(change.at, change.name, change.generation);
    this.#seen.set(sk, change.at);
  }

  /**
   * The account `name` was just read at `generation`: when the newest entry read for it names a later
   * one, the write it announces has not landed yet (a writer appends the entry alongside the write),
   * so the entry is read again by the next poll instead of counting as done. True then.
   */
  behind(name: string, generation: number): boolean {
    const latest = this.#latest.get(name);
    if (latest === undefined) return false;
    if (latest.generation <= generation) {
      this.#latest.delete(name);
      return false;
    }
    this.#seen.delete(latest.sk);
    return true;
  }
}
