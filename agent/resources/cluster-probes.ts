/**
 * One cluster probe per cluster (docs/cache.md, "When the cluster does not answer"): the accounts an
 * agent caches on the same API server as the same user (`ClusterClient.identity`) share one probe, so
 * an outage is looked at with one request at a time however many accounts wait for it, and its end
 * releases the scopes of all of them at once. One registry per agent, like the WatchList record.
 */
import type { ClusterClient } from '../clusters/index.ts';
import { ClusterProbe, type ClusterProbeDeps } from './cluster-probe.ts';

interface Shared {
  probe: ClusterProbe;
  listeners: Set<() => void>;
}

/** A probe taken for one account: `release` when its cache stops. */
export interface ClusterProbeLease {
  readonly probe: ClusterProbe;
  release(): void;
}

export class ClusterProbes {
  readonly #byIdentity = new Map<string, Shared>();

  /**
   * The probe of `deps.cluster`'s API server, made on first use with these deps (its log lines name
   * the server, whichever account took it first); `onChange` is told of every change of reachability.
   */
  acquire(deps: Omit<ClusterProbeDeps, 'onChange'>, onChange: () => void): ClusterProbeLease {
    const id = deps.cluster.identity;
    // A client that cannot say who it is shares with no other.
    if (id === undefined) {
      const probe = new ClusterProbe({ ...deps, onChange });
      return { probe, release: () => probe.stop() };
    }
    let shared = this.#byIdentity.get(id);
    if (shared === undefined) {
      const listeners = new Set<() => void>();
      const probe = new ClusterProbe({ ...deps, onChange: () => listeners.forEach((l) => l()) });
      shared = { probe, listeners };
      this.#byIdentity.set(id, shared);
    }
    const taken = shared;
    // Each lease has a listener of its own, even when two leases pass the same function.
    const listener = () => onChange();
    taken.listeners.add(listener);
    return {
      probe: taken.probe,
      release: () => {
        if (!taken.listeners.delete(listener) || taken.listeners.size > 0) return;
        taken.probe.stop();
        if (this.#byIdentity.get(id) === taken) this.#byIdentity.delete(id);
      },
    };
  }

  /** Probes shared now (for tests). */
  get size(): number {
    return this.#byIdentity.size;
  }
}

const registries = new WeakMap<object, ClusterProbes>();

/** The probes of an agent (keyed by its context object), made on first use. */
export function clusterProbesOf(owner: object): ClusterProbes {
  let r = registries.get(owner);
  if (r === undefined) registries.set(owner, (r = new ClusterProbes()));
  return r;
}
