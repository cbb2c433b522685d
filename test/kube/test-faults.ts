import type { FaultMatch, FaultPlan, FaultRule } from './faults.ts';
import type { TestStore } from './test-store.ts';
import type { WatchFilter, WatchHub } from './watch.ts';

/**
 * The fault knobs of a test API server, for tests that prove clients survive a misbehaving cluster.
 */
export class TestFaults {
  readonly #plan: FaultPlan;
  readonly #watches: WatchHub;
  readonly #store: TestStore;
  readonly #closeSockets: () => number;

  constructor(plan: FaultPlan, watches: WatchHub, store: TestStore, closeSockets: () => number) {
    this.#plan = plan;
    this.#watches = watches;
    this.#store = store;
    this.#closeSockets = closeSockets;
  }

  /** Arms a rule for the next `times` matching requests; returns its id. */
  inject(rule: FaultRule): number {
    return this.#plan.inject(rule);
  }

  /** Answers the next `times` matching requests with a Status of `code` (429 carries Retry-After). */
  fail(match: FaultMatch, code: number, times = 1, extra: { retryAfterSeconds?: number; message?: string } = {}): number {
    return this.#plan.inject({ match, times, action: { type: 'status', code, ...extra } });
  }

  /** The next `times` matching requests get no answer until the client gives up or the server closes. */
  hang(match: FaultMatch, times = 1): number {
    return this.#plan.inject({ match, times, action: { type: 'hang' } });
  }

  /** The next `times` matching requests have their connection cut without an answer. */
  closeConnection(match: FaultMatch, times = 1): number {
    return this.#plan.inject({ match, times, action: { type: 'close' } });
  }

  /** Adds latency to every matching request until `clear()`. */
  latency(ms: number, match: FaultMatch = {}): void {
    this.#plan.latency(ms, match);
  }

  remove(id: number): void {
    this.#plan.remove(id);
  }

  /** Removes every armed rule and latency. */
  clear(): void {
    this.#plan.clear();
  }

  /** Ends open watches (cleanly, or by cutting the connection with `destroy`); returns how many. */
  dropWatches(filter: WatchFilter = {}, mode: 'end' | 'destroy' = 'end'): number {
    return this.#watches.drop(filter, mode);
  }

  /** Open watches stop sending anything (events, bookmarks) and never time out; returns how many. */
  silenceWatches(filter: WatchFilter = {}): number {
    return this.#watches.silence(filter);
  }

  /** Cuts every open connection; returns how many. */
  closeSockets(): number {
    return this.#closeSockets();
  }

  /**
   * Compacts history up to `rv` (default: the current revision), making older versions answer 410;
   * with `only` (`{ apiVersion, kind }`) just for that kind, so only its watches and lists expire.
   */
  compact(rv?: number, only?: { apiVersion: string; kind: string }): void {
    this.#store.compact(rv, only);
  }

  /**
   * Expires every resourceVersion handed out so far, the newest included: the revision moves on
   * without a change (as kube-apiserver's own compaction write does) and history is compacted there.
   * Watches from those versions, lists at them and continue tokens made at them answer 410.
   */
  expireHistory(): number {
    const rv = this.#store.advance();
    this.#store.compact(rv);
    return rv;
  }

  /** Sends a BOOKMARK now on every watch that allows them and has news. */
  sendBookmarks(): void {
    this.#watches.sendBookmarks();
  }

  /** Open watch streams. */
  get openWatches(): number {
    return this.#watches.size;
  }
}
