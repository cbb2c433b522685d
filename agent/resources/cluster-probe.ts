/**
 * Whether an account's cluster answers at all, for the cache's scopes. When a scope's request gets no
 * answer (a refused or reset connection, a timeout) or its credential is refused (401), the cause is
 * the cluster's, not the scope's: instead of every scope backing off on its own (each kind then comes
 * back up to a minute after the server did), the scope waits here. One probe per cluster (GET /version
 * with the account's credentials, which a real API server refuses with 401 as it refuses every path
 * when the credential is bad, then GET /readyz) is sent on a short backoff of its own; its first success releases every
 * waiting scope at once, each after a jitter of its own so the server is not stampeded. A scope that
 * fails for a reason of its own (403 forbidden, 500) never waits here and keeps its own backoff.
 *
 * The probe also keeps what operators are shown: reachable or not, since when, why, and the last
 * outage that ended. A failure that the probe does not confirm (the cluster answered at its first
 * look) changes nothing of that, and the scope falls back to its own backoff.
 */
import { backoffDelay, type BackoffPolicy, type Random } from '../../shared/backoff.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { isKubeconfigUnusable, isKubeTransportError, kubeErrorStatus } from '../clusters/errors.ts';
import type { ClusterClient } from '../clusters/index.ts';

/** Why a cluster does not serve the account: no answer, or its credential refused. */
export type OutageReason = 'unreachable' | 'unauthorized';

export interface ClusterProbeTiming {
  /** The probe's wait after its first failed look, doubling to `probeMaxMs` (each wait half to the whole). */
  probeInitialMs: number;
  probeMaxMs: number;
  /** A probe with no answer after this is a failed look. */
  probeTimeoutMs: number;
  /** Released scopes start again spread uniformly over this. */
  resumeJitterMs: number;
}

export const DEFAULT_PROBE_TIMING: ClusterProbeTiming = {
  probeInitialMs: 250,
  probeMaxMs: 2000,
  probeTimeoutMs: 2000,
  resumeJitterMs: 500,
};

/** The reason a cluster-wide failure carries, or undefined for a failure of the request's own. */
export function outageReasonOf(error: unknown): OutageReason | undefined {
  if (kubeErrorStatus(error) === 401) return 'unauthorized';
  // Credentials the agent obtains itself (an exec plugin, a token file) that cannot be had.
  if (isKubeconfigUnusable(error)) return 'unauthorized';
  if (isKubeTransportError(error)) return 'unreachable';
  return undefined;
}

/** What operators see of the cluster (times on the agent's clock). */
export interface ClusterReachability {
  reachable: boolean;
  /** When the present state began: the outage's start, or when the cluster answered again (or was first reached). */
  since: number;
  /** While unreachable. */
  reason?: OutageReason;
  /** While unreachable: the last failure, as the API server or the socket said it (no credentials). */
  error?: string;
  /** The last outage that ended. */
  lastOutage?: { reason: OutageReason; from: number; until: number };
}

export interface ClusterProbeDeps {
  cluster: ClusterClient;
  clock: Clock;
  random: Random;
  log: Logger;
  timing: ClusterProbeTiming;
  /** Told whenever the reachability operators see changes. */
  onChange?(): void;
}

interface Outage {
  from: number;
  reason: OutageReason;
  error: string;
  /** A look of the probe failed too: the cluster really is down (otherwise only a scope's request was). */
  confirmed: boolean;
  released: Promise<boolean>;
  release(confirmed: boolean): void;
  waiting: number;
}

export class ClusterProbe {
  readonly #deps: ClusterProbeDeps;
  readonly #stop = new AbortController();
  #outage: Outage | undefined;
  #state: ClusterReachability;

  constructor(deps: ClusterProbeDeps) {
    this.#deps = deps;
    this.#state = { reachable: true, since: deps.clock.now() };
  }

  get reachability(): ClusterReachability {
    return this.#state;
  }

  /** Scopes waiting for the cluster now. */
  get waiting(): number {
    return this.#outage?.waiting ?? 0;
  }

  stop(): void {
    this.#stop.abort(new Error('cache stopped'));
  }

  /**
   * A scope's request failed with `error`, a cluster-wide failure (`outageReasonOf`). Resolves once
   * the cluster answers the probe, after the scope's own jitter: true when the probe had found it down
   * (an outage that ended: the scope starts again at once, its backoff forgotten), false when the
   * cluster answered at the first look (the failure was the scope's own: it backs off as usual).
   * Rejects when `signal` aborts.
   */
  async waitFor(reason: OutageReason, error: unknown, signal: AbortSignal): Promise<boolean> {
    const outage = this.#begin(reason, error);
    outage.waiting++;
    let confirmed: boolean;
    try {
      confirmed = await abortable(outage.released, signal);
    } finally {
      outage.waiting--;
    }
    if (confirmed) await this.#deps.clock.sleep(Math.floor(this.#deps.random() * this.#deps.timing.resumeJitterMs), signal);
    return confirmed;
  }

  #begin(reason: OutageReason, error: unknown): Outage {
    const message = error instanceof Error ? error.message : String(error);
    const current = this.#outage;
    if (current !== undefined) {
      if (!current.confirmed) {
        current.reason = reason;
        current.error = message;
      }
      return current;
    }
    let release: (confirmed: boolean) => void = () => {};
    const released = new Promise<boolean>((resolve) => (release = resolve));
    const outage: Outage = { from: this.#deps.clock.now(), reason, error: message, confirmed: false, released, release, waiting: 0 };
    this.#outage = outage;
    void this.#probe(outage);
    return outage;
  }

  /** Looks at the cluster until it answers, then releases the outage's waiters. */
  async #probe(outage: Outage): Promise<void> {
    const { clock, cluster, log, timing } = this.#deps;
    const policy: BackoffPolicy = { baseMs: timing.probeInitialMs, maxMs: timing.probeMaxMs, jitter: [0.5, 1], round: true };
    const signal = this.#stop.signal;
    let looks = 0;
    for (;;) {
      if (signal.aborted) return;
      const failure = await this.#look(cluster, signal);
      if (signal.aborted) return;
      if (failure === undefined) break;
      looks++;
      outage.reason = failure.reason;
      outage.error = failure.error;
      if (!outage.confirmed) {
        outage.confirmed = true;
        log.warn(
          { server: cluster.server, reason: failure.reason, err: failure.error, scopes: outage.waiting },
          `the cluster ${failure.reason === 'unauthorized' ? 'refuses the account\'s credential' : 'does not answer'}; ${outage.waiting} scopes wait for it`,
        );
      }
      this.#publish();
      try {
        await clock.sleep(backoffDelay(policy, looks, this.#deps.random), signal);
      } catch {
        return;
      }
    }
    this.#outage = undefined;
    const now = clock.now();
    if (outage.confirmed) {
      log.info(
        { server: cluster.server, reason: outage.reason, outageMs: now - outage.from, scopes: outage.waiting },
        `the cluster answers again after ${Math.round((now - outage.from) / 1000)} s; ${outage.waiting} scopes start again`,
      );
      this.#state = { reachable: true, since: now, lastOutage: { reason: outage.reason, from: outage.from, until: now } };
      this.#deps.onChange?.();
    }
    outage.release(outage.confirmed);
  }

  /**
   * One look: undefined when the cluster answered with the account's credential and says it is ready.
   * GET /version proves the route and the credential; GET /readyz then keeps the scopes waiting while a
   * restarted API server still starts (it answers 500 until then), so they do not meet its first
   * refusals and fall back on their own backoff. A server without /readyz (404, 403) counts as ready.
   */
  async #look(cluster: ClusterClient, signal: AbortSignal): Promise<{ reason: OutageReason; error: string } | undefined> {
    // No retries of `kubernetes.retries.*`: this loop is the retry, and a look must stay short.
    const once = { retry: false, timeoutMs: this.#deps.timing.probeTimeoutMs, signal } as const;
    try {
      await cluster.request({ path: '/version', ...once });
      await cluster.request({ path: '/readyz', ...once });
      return undefined;
    } catch (e) {
      const status = kubeErrorStatus(e);
      const reason = outageReasonOf(e) ?? (status !== undefined && (status >= 500 || status === 429) ? 'unreachable' : undefined);
      // Any other answer (403, 404 from a proxy in front) is the server answering with the credential accepted.
      return reason === undefined ? undefined : { reason, error: (e as Error).message };
    }
  }

  #publish(): void {
    const outage = this.#outage;
    if (outage === undefined || !outage.confirmed) return;
    const before = this.#state;
    const next: ClusterReachability = {
      reachable: false,
      since: outage.from,
      reason: outage.reason,
      error: outage.error,
      ...(before.lastOutage === undefined ? {} : { lastOutage: before.lastOutage }),
    };
    if (before.reachable || before.reason !== next.reason || before.error !== next.error) {
      this.#state = next;
      this.#deps.onChange?.();
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
