/**
 * Deletes the cache of accounts that went, and their operation-list entries (docs/table.md, "Cache
 * cleanup"): every replica looks at the cleanup markers every `intervalMs`, and works each marker older
 * than `delayMs` a batch of 25 items at a time under the marker's lease, so one replica works a marker at a time and a replica that
 * stops mid-way leaves the rest to the next holder once the lease has run out.
 */
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import {
  cacheHasWriter,
  cacheRemovalPending,
  claimCacheCleanup,
  deleteCacheBatch,
  finishCacheCleanup,
  nextCacheBatch,
  pendingCacheCleanups,
  type CacheCleanupMarker,
} from '../../shared/table/resources/cleanup.ts';

export interface CacheCleanupOptions {
  /**
   * How long after the removal a marker is worked (default 30 s): the write that removes the account
   * follows its marker, and the last cache writes of the agent that held it may still be on their way.
   */
  delayMs?: number;
  /** How often the markers are read (default 15 s). */
  intervalMs?: number;
  /** Called after each batch deleted (tests stop the loop there). */
  afterBatch?: (account: string, deleted: number) => void | Promise<void>;
}

export interface CacheCleanupDeps {
  table: TableRef;
  clock: Clock;
  log: Logger;
  /** The lease holder's id: this replica. */
  holder: string;
}

export type CleanupOutcome = 'done' | 'cancelled' | 'waiting' | 'lost' | 'stopped';

export class CacheCleanupLoop {
  readonly #deps: CacheCleanupDeps;
  readonly #delayMs: number;
  readonly #intervalMs: number;
  readonly #afterBatch: CacheCleanupOptions['afterBatch'];

  constructor(deps: CacheCleanupDeps, options: CacheCleanupOptions = {}) {
    this.#deps = deps;
    this.#delayMs = options.delayMs ?? 30_000;
    this.#intervalMs = options.intervalMs ?? 15_000;
    this.#afterBatch = options.afterBatch;
  }

  /** Reads the markers and works every one that is due; answers each worked marker's outcome. */
  async pass(signal?: AbortSignal): Promise<Map<string, CleanupOutcome>> {
    const outcomes = new Map<string, CleanupOutcome>();
    const now = this.#deps.clock.now();
    for (const marker of await pendingCacheCleanups(this.#deps.table)) {
      if (marker.removedAt + this.#delayMs > now) continue;
      if (signal?.aborted === true) break;
      outcomes.set(marker.account, await this.work(marker, signal));
    }
    return outcomes;
  }

  /**
   * Works one marker to its end, renewing the lease before every batch. Each batch's keys are read
   * before the account is looked at, and deleted only when nothing writes the account's cache: an
   * account registered again (or announced by an agent) meanwhile keeps its data and the marker goes;
   * one the driver has not yet taken from every agent is left for a later pass.
   */
  async work(marker: CacheCleanupMarker, signal?: AbortSignal): Promise<CleanupOutcome> {
    const { table, clock, holder } = this.#deps;
    for (;;) {
      if (signal?.aborted === true) return 'stopped';
      if (!(await claimCacheCleanup(table, marker, holder, clock.now()))) return 'lost';
      const keys = await nextCacheBatch(table, marker.account);
      const record = await getAccount(table, marker.account, { consistent: true });
      if (cacheHasWriter(record)) {
        await finishCacheCleanup(table, marker, holder);
        return 'cancelled';
      }
      // Left for a later pass (the lease runs out meanwhile): deleting under an agent that still
      // caches the account would leave it serving a cache with holes it does not know of.
      if (cacheRemovalPending(record)) return 'waiting';
      if (keys.length === 0) {
        await finishCacheCleanup(table, marker, holder);
        return 'done';
      }
      await deleteCacheBatch(table, keys);
      await this.#afterBatch?.(marker.account, keys.length);
    }
  }

  /** Runs passes until `signal` aborts; a failed pass is logged and the next one tries again. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for (const [account, outcome] of await this.pass(signal)) {
          if (outcome === 'done' || outcome === 'cancelled') this.#deps.log.info({ account, outcome }, 'account cache cleanup ended');
        }
      } catch (err) {
        this.#deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'account cache cleanup pass failed; trying again');
      }
      try {
        await this.#deps.clock.sleep(this.#intervalMs, signal);
      } catch {
        return;
      }
    }
  }
}
