/**
 * The resource cache as an account worker: it caches an account while this agent holds its caching
 * role, starts over when the caching epoch, the cluster or the settings that shape the cache change,
 * and stops when the role moves away. Every message it sends carries the epoch it caches under.
 */
import type { AccountWorker, AccountWorkerFactory, CachedScope, HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import type { ClusterClient } from '../clusters/index.ts';
import type { DriverWork } from '../connection/driver-stream.ts';
import { decoderOf, type Decoder } from './decoder.ts';
import { listGateOf, type ListGate } from './list-gate.ts';
import { DEFAULT_TIMING } from './reflector.ts';
import { CacheRun, DEFAULT_CACHE_TIMING, type CacheTiming, type RunDeps } from './cache-run.ts';
import { WatchListProbes, watchListProbesOf } from './watch-list-probe.ts';
import { clusterProbesOf, type ClusterProbes } from './cluster-probes.ts';

export interface CacheWorkerOptions {
  timing?: Partial<CacheTiming>;
  random?: () => number;
  /** The agent-wide cap on concurrent lists; by default one gate per agent context. */
  lists?: ListGate;
  batch?: RunDeps['batch'];
  onSent?: RunDeps['onSent'];
  /** Where watch lines and list pages are decoded; by default one decoder (with threads where the machine has CPUs to spare) per agent context. */
  decoder?: Decoder;
  /** What is learnt of each cluster's WatchList; by default one record per agent context. */
  watchLists?: WatchListProbes;
  /** The probes of clusters that do not answer; by default one registry per agent context. */
  clusterProbes?: ClusterProbes;
}

/** What a change of which restarts the cache. */
function cacheShape(a: HeldAccountView): string {
  const s = a.settings;
  return JSON.stringify([a.cachingEpoch, s.kinds, s.omitKinds, s.namespaces, s.omitNamespaces, s.onlyNamespacedResources, s.onlySpinnakerManaged, s.customResourceDefinitions]);
}

export type CacheWorkerDeps = Omit<RunDeps, 'host' | 'watchList'> & { watchLists?: WatchListProbes };

export class CacheWorker implements AccountWorker {
  readonly #host: WorkerHost;
  readonly #deps: Omit<RunDeps, 'host' | 'watchList'>;
  readonly #watchLists: WatchListProbes;
  #account: HeldAccountView;
  #run: { run: CacheRun; shape: string; cluster: ClusterClient } | undefined;
  #transition: Promise<void> = Promise.resolve();

  constructor(account: HeldAccountView, host: WorkerHost, deps: CacheWorkerDeps) {
    const { watchLists, ...rest } = deps;
    this.#account = account;
    this.#host = host;
    this.#deps = rest;
    // Made without an agent's record (tests), the worker learns for itself.
    this.#watchLists = watchLists ?? new WatchListProbes();
    this.update(account);
  }

  /** The running cache, for tests. */
  get run(): CacheRun | undefined {
    return this.#run?.run;
  }

  update(account: HeldAccountView): Promise<void> {
    this.#account = account;
    this.#transition = this.#transition.then(() => this.#reconcile());
    return this.#transition;
  }

  handle(work: DriverWork): void {
    if (work.kind === 'resumeInfo') this.#run?.run.handleResumeInfo(work.body);
  }

  connected(): void {
    this.#run?.run.connected();
  }

  cacheScopes(): CachedScope[] {
    return this.#run?.run.scopeStates() ?? [];
  }

  stop(): Promise<void> {
    this.#transition = this.#transition.then(() => this.#halt());
    return this.#transition;
  }

  async #reconcile(): Promise<void> {
    const account = this.#account;
    const current = this.#run;
    if (!account.caching) return this.#halt();
    const shape = cacheShape(account);
    if (current !== undefined && current.shape === shape && current.cluster === account.cluster) return;
    await this.#halt();
    const run = new CacheRun(account, { ...this.#deps, host: this.#host, watchList: this.#watchLists.of(account.cluster) });
    this.#run = { run, shape, cluster: account.cluster };
    account.logger.info({ cachingEpoch: account.cachingEpoch }, 'caching the account');
    run.start();
  }

  async #halt(): Promise<void> {
    const current = this.#run;
    if (current === undefined) return;
    this.#run = undefined;
    await current.run.stop();
    this.#account.logger.info('no longer caching the account');
  }
}

/** The resource cache's worker factory, with options for tests and benchmarks. */
export function cacheWorkerFactory(options: CacheWorkerOptions = {}): AccountWorkerFactory {
  return (account, host, ctx) =>
    new CacheWorker(account, host, {
      clock: ctx.clock,
      random: options.random ?? Math.random,
      lists: options.lists ?? listGateOf(ctx),
      budget: ctx.budget,
      metrics: ctx.metrics,
      decoder: options.decoder ?? decoderOf(ctx),
      watchLists: options.watchLists ?? watchListProbesOf(ctx),
      clusterProbes: options.clusterProbes ?? clusterProbesOf(ctx),
      timing: { ...DEFAULT_TIMING, ...DEFAULT_CACHE_TIMING, ...options.timing },
      ...(options.batch === undefined ? {} : { batch: options.batch }),
      ...(options.onSent === undefined ? {} : { onSent: options.onSent }),
    });
}
