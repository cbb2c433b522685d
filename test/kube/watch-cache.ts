import type { ResourceType } from './resource-types.ts';
import type { Store } from './store.ts';

/**
 * Where kube-apiserver's watch cache of a resource stands: the version a list at `resourceVersion=0`
 * reports, the version reads "not older than" a given one wait for, and the version bookmarks carry.
 *
 * A cache that learns etcd's progress (kube-apiserver 1.21 on) follows the store's revision. Without
 * that (1.20) it starts at the revision current when the server started and then moves only with
 * its own resource's events, so a version learnt from another resource can be ahead of it.
 */
export class WatchCache {
  readonly #store: Store;
  readonly #progress: boolean;
  #startRv = 0;

  constructor(store: Store, progress: boolean) {
    this.#store = store;
    this.#progress = progress;
  }

  /** The server is serving from here on: caches without progress start at the current revision. */
  started(): void {
    this.#startRv = this.#store.resourceVersion;
  }

  rv(rt: ResourceType): number {
    return this.#progress ? this.#store.resourceVersion : Math.max(this.#startRv, this.#store.lastEventRv(rt));
  }

  /** Resolves true once the cache of `rt` has reached `rv`, false after `ms`. */
  reached(rt: ResourceType, rv: number, ms: number): Promise<boolean> {
    return this.#store.waitUntil(() => this.rv(rt) >= rv, ms);
  }
}
