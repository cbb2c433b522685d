/**
 * Pod metrics of one account (`metrics`, docs/cache.md#pod-metrics): every 20 seconds the caching agent reads
 * `metrics.k8s.io` pod metrics (of the whole cluster, or of each namespace of `namespaces`) and sends
 * them as `PodMetrics` messages. They are best effort: a reading made while no stream is open is not
 * kept, the next one follows 20 seconds later. A cluster without the metrics API (no metrics-server)
 * gets one warning, then the agent keeps looking quietly and says when the API appears.
 */
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { PodUsage } from '../../shared/protocol/messages.ts';
import type { HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import { kubeErrorStatus } from '../clusters/errors.ts';
import { cachedNamespaces } from '../resources/cache-filter.ts';
import { Waker } from '../../shared/waker.ts';
import { acquireTask } from '../tasks/acquire.ts';
import type { TaskBudget } from '../tasks/budget.ts';

/** Pod metrics are sent every 20 seconds (docs/agent-config.md#per-account-kubernetesaccounts). */
export const POD_METRICS_INTERVAL_MS = 20_000;
/** Pods per message; a namespace is never split across messages. */
const PODS_PER_MESSAGE = 2000;

interface PodMetricsList {
  items?: { metadata?: { name?: string; namespace?: string }; timestamp?: string; window?: string; containers?: { name?: string; usage?: { cpu?: string; memory?: string } }[] }[];
}

export interface MetricsLoopDeps {
  host: WorkerHost;
  clock: Clock;
  intervalMs?: number;
  /** When given, each reading is a `metrics` task of this budget (`tasks.*`). */
  budget?: TaskBudget;
}

let lastReadingId = 0;

/** One reading's pods, grouped by namespace, as messages of at most `PODS_PER_MESSAGE` pods. */
export function podMetricsMessages(pods: PodUsage[], namespaces: readonly string[], account: string, cachingEpoch: number, readingId: number) {
  const byNamespace = new Map<string, PodUsage[]>(namespaces.map((n) => [n, []]));
  for (const p of pods) {
    const list = byNamespace.get(p.namespace!) ?? [];
    list.push(p);
    byNamespace.set(p.namespace!, list);
  }
  const parts: { namespaces: string[]; pods: PodUsage[] }[] = [{ namespaces: [], pods: [] }];
  for (const [namespace, list] of [...byNamespace].sort(([a], [b]) => a.localeCompare(b))) {
    let part = parts[parts.length - 1]!;
    if (part.pods.length > 0 && part.pods.length + list.length > PODS_PER_MESSAGE) parts.push((part = { namespaces: [], pods: [] }));
    part.namespaces.push(namespace);
    part.pods.push(...list);
  }
  return parts.map((p, i) => ({ account, cachingEpoch, readingId, namespaces: p.namespaces, pods: p.pods, part: i + 1, last: i === parts.length - 1 }));
}

export class PodMetricsLoop {
  readonly #account: HeldAccountView;
  readonly #deps: MetricsLoopDeps;
  readonly #log: Logger;
  #available: boolean | undefined;
  readonly #waker = new Waker();
  #lastError = '';

  constructor(account: HeldAccountView, deps: MetricsLoopDeps) {
    this.#account = account;
    this.#deps = deps;
    this.#log = account.logger;
  }

  /** A stream to the driver opened: a reading waiting for one goes now. */
  connected(): void {
    this.#waker.wake();
  }

  async run(signal: AbortSignal): Promise<void> {
    const interval = this.#deps.intervalMs ?? POD_METRICS_INTERVAL_MS;
    while (!signal.aborted) {
      // A reading is only worth making when it can be sent.
      if (!this.#deps.host.connected()) {
        await this.#waker.wait(this.#deps.clock, interval, signal);
        continue;
      }
      const endTask = await this.#budgetTurn(signal);
      if (endTask === undefined) return;
      const started = this.#deps.clock.now();
      try {
        await this.#readAndSend(signal);
      } finally {
        endTask();
      }
      const wait = Math.max(0, started + interval - this.#deps.clock.now());
      try {
        await this.#deps.clock.sleep(wait, signal);
      } catch {
        return;
      }
    }
  }

  /** Waits for the budget to allow a reading; undefined when stopped meanwhile. */
  async #budgetTurn(signal: AbortSignal): Promise<(() => void) | undefined> {
    const { budget } = this.#deps;
    if (budget === undefined) return () => undefined;
    try {
      return await acquireTask(budget, { account: this.#account.name, kind: 'metrics', name: 'pod metrics' }, signal);
    } catch {
      return undefined;
    }
  }

  async #readAndSend(signal: AbortSignal): Promise<void> {
    const { cluster, settings, name, cachingEpoch } = this.#account;
    // The namespaces the cache covers: what omitNamespaces leaves out reaches the table by no way.
    const { only, omitted } = cachedNamespaces(settings);
    const namespaces = only ?? [];
    const paths = only === undefined ? ['/apis/metrics.k8s.io/v1beta1/pods'] : only.map((n) => `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(n)}/pods`);
    const pods: PodUsage[] = [];
    try {
      for (const path of paths) {
        const list = (await cluster.request({ path, signal })).json<PodMetricsList>();
        for (const item of list.items ?? []) {
          if (omitted.includes(item.metadata?.namespace ?? '')) continue;
          pods.push({
            namespace: item.metadata?.namespace ?? '',
            name: item.metadata?.name ?? '',
            timestamp: item.timestamp ?? '',
            window: item.window ?? '',
            containers: (item.containers ?? []).map((c) => ({ name: c.name ?? '', cpu: c.usage?.cpu ?? '', memory: c.usage?.memory ?? '' })),
          });
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      this.#failed(e);
      return;
    }
    if (this.#available === false) this.#log.info('the metrics.k8s.io API answers again; pod metrics are sent');
    this.#available = true;
    this.#lastError = '';
    const readingId = ++lastReadingId;
    for (const body of podMetricsMessages(pods, namespaces, name, cachingEpoch, readingId)) {
      if (!this.#deps.host.notify({ kind: 'podMetrics', body })) return;
    }
  }

  #failed(e: unknown): void {
    const status = kubeErrorStatus(e);
    // No metrics-server: the group is not served (404), or its APIService has no backend (503).
    if (status === 404 || status === 503) {
      if (this.#available !== false) {
        this.#log.warn(
          { status },
          `the cluster does not serve the metrics.k8s.io API (is metrics-server installed?); pod metrics are not sent, and the agent checks again every ${(this.#deps.intervalMs ?? POD_METRICS_INTERVAL_MS) / 1000} s`,
        );
      }
      this.#available = false;
      return;
    }
    const message = (e as Error).message;
    if (message !== this.#lastError) this.#log.warn({ err: message }, 'reading pod metrics failed; trying again at the next interval');
    this.#lastError = message;
  }
}
