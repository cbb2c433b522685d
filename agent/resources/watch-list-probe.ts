/**
 * Whether an API server offers WatchList is learnt once per cluster (docs/cache.md, "Keeping the cache
 * current"): the first list of any account on it finds out while the others wait, and every account
 * that reaches the same API server as the same user (`ClusterClient.identity`) shares the answer.
 * One record per agent, so agents in one process (tests) each find out for themselves.
 */
import type { ClusterClient } from '../clusters/index.ts';
import type { WatchListSupport } from './reflector.ts';

export class WatchListProbes {
  readonly #byIdentity = new Map<string, WatchListSupport>();
  /** A client that cannot say who it is shares with no other. */
  readonly #byClient = new WeakMap<ClusterClient, WatchListSupport>();

  /** The shared record of `cluster`'s API server, made on first use. */
  of(cluster: ClusterClient): WatchListSupport {
    const id = cluster.identity;
    if (id === undefined) {
      let w = this.#byClient.get(cluster);
      if (w === undefined) this.#byClient.set(cluster, (w = {}));
      return w;
    }
    let w = this.#byIdentity.get(id);
    if (w === undefined) this.#byIdentity.set(id, (w = {}));
    return w;
  }
}

const probes = new WeakMap<object, WatchListProbes>();

/** The probes of an agent (keyed by its context object), made on first use. */
export function watchListProbesOf(owner: object): WatchListProbes {
  let p = probes.get(owner);
  if (p === undefined) probes.set(owner, (p = new WatchListProbes()));
  return p;
}
