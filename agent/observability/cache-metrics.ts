/**
 * The cache's per-kind state as gauges (docs/metrics.md). Their labels are an account this agent
 * holds and a kind it caches for that account, both from configuration: the series of an account
 * or kind that stops being cached are removed with it, so their number stays that of the
 * `/cache` endpoint's rows.
 */
import type { AgentMetrics } from './metrics.ts';

type KindLabels = { account: string; kind: string };

/** What the gauges read of a kind's summary (agent/resources/kind-health.ts). */
export interface KindCacheState {
  scopes: number;
  watching: number;
  /** Epoch milliseconds of the newest watch event, if any came. */
  lastEventAt?: number | undefined;
}

export function recordKindCache(metrics: AgentMetrics, labels: KindLabels, k: KindCacheState): void {
  metrics.cacheScopes.set(labels, k.scopes);
  metrics.cacheWatchingScopes.set(labels, k.watching);
  if (k.lastEventAt !== undefined) metrics.cacheLastEvent.set(labels, k.lastEventAt / 1000);
}

export function forgetKindCache(metrics: AgentMetrics, labels: KindLabels): void {
  metrics.cacheScopes.remove(labels);
  metrics.cacheWatchingScopes.remove(labels);
  metrics.cacheLastEvent.remove(labels);
}
