/**
 * The cache of one account for one caching epoch: discovery, the resume exchange, one reflector per
 * scope, synthetic resources, health reports, and a new look at discovery when CRDs change. It runs
 * until stopped; every failure inside is retried (see the reflector), so it never ends by itself.
 */
import { backoffDelay } from '../../shared/backoff.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { Waker } from '../../shared/waker.ts';
import type { ResourceScope__Output, ResumeInfo__Output } from '../../shared/protocol/messages.ts';
import type { HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import type { AgentMetrics } from '../observability/metrics.ts';
import type { TaskBudget } from '../tasks/budget.ts';
import { budgetedListSlots } from '../tasks/budgeted-lists.ts';
import { Batcher } from './batcher.ts';
import { ClusterProbes } from './cluster-probes.ts';
import { ClusterProbe, DEFAULT_PROBE_TIMING, outageReasonOf, type ClusterProbeTiming } from './cluster-probe.ts';
import { clusterStatusMessage, failingScopesLine } from './cluster-report.ts';
import { progressSource } from './cache-filter.ts';
import type { Decoder } from './decoder.ts';
import { syntheticObject } from './compact.ts';
import { discoverServedKinds } from './served-kinds.ts';
import { healthFingerprint, healthMessage, summarize } from './kind-health.ts';
import { accountListSlots, type ListGate } from './list-gate.ts';
import { Reflector, cacheBackoff, type ReflectorTiming, type ScopeState, type WatchListSupport } from './reflector.ts';
import { ResumeClient } from './resume.ts';
import { CRD_TYPE, NAMESPACE_TYPE, badCrdKinds, selectScopes, type Selection } from './selection.ts';
import { kindNameOfType, scopeId, type CacheScope, type ResourceType } from './types.ts';
import { forgetKindCache, recordKindCache } from '../observability/cache-metrics.ts';

export interface CacheTiming extends ReflectorTiming, ClusterProbeTiming {
  /** Scopes failing on their own (a forbidden kind) are summed up in one log line at most this often. */
  failureSummaryMs: number;
  /** How often health is looked at (sent when it changed), and sent regardless after `healthMaxAgeMs`. */
  healthIntervalMs: number;
  healthMaxAgeMs: number;
  /**
   * A scope that starts or stops watching, fails or works again is reported at once, but reports are
   * at least this far apart, so hundreds of scopes starting together make a few messages, not hundreds.
   */
  healthChangeGapMs: number;
  /** Discovery is read again this often, and this long after a CRD changes. */
  rediscoverMs: number;
  rediscoverDebounceMs: number;
  /** Wait before asking again when the driver refuses the caching epoch. */
  refusedRetryMs: number;
}

export const DEFAULT_CACHE_TIMING: Omit<CacheTiming, keyof ReflectorTiming> = {
  ...DEFAULT_PROBE_TIMING,
  failureSummaryMs: 300_000,
  healthIntervalMs: 10_000,
  healthMaxAgeMs: 60_000,
  healthChangeGapMs: 250,
  rediscoverMs: 300_000,
  rediscoverDebounceMs: 2000,
  refusedRetryMs: 10_000,
};

export interface RunDeps {
  host: WorkerHost;
  clock: Clock;
  random: () => number;
  lists: ListGate;
  /** When given, every list of every scope is a task of this budget (`tasks.*`). */
  budget?: TaskBudget;
  metrics?: AgentMetrics;
  timing: CacheTiming;
  watchList: WatchListSupport;
  /** The agent's cluster probes, shared by the accounts on one cluster; a probe of its own when not given. */
  clusterProbes?: ClusterProbes;
  /** Where watch lines and list pages are decoded; on this thread when not given. */
  decoder?: Decoder;
  /** Batching knobs (tests use small ones). */
  batch?: { maxChanges?: number; window?: number; maxSyncKeys?: number };
  onSent?(changes: number, bytes: number): void;
}

interface Running {
  reflector: Reflector;
  abort: AbortController;
  done: Promise<void>;
}

const SYNTHETIC_NAMESPACES: ResourceScope__Output = { group: NAMESPACE_TYPE.group, kind: NAMESPACE_TYPE.kind, namespace: '', synthetic: true };
const SYNTHETIC_CRDS: ResourceScope__Output = { group: CRD_TYPE.group, kind: CRD_TYPE.kind, namespace: '', synthetic: true };

/** A scope's identity including the version it is watched at, so a new preferred version restarts it. */
const runKey = (s: CacheScope) => `${scopeId(s)}@${s.type.version}`;
/** Distinct objects left out whose warning is logged; past this many, the rest are left out without one. */
const MAX_LEFT_OUT_LOGGED = 100;

export class CacheRun {
  readonly #account: HeldAccountView;
  readonly #deps: RunDeps;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  readonly #batcher: Batcher;
  readonly #resume: ResumeClient;
  readonly #running = new Map<string, Running>();
  readonly #waker = new Waker();
  readonly #probe: ClusterProbe;
  readonly #releaseProbe: () => void;
  #lastFailureSummaryAt: number;
  #main: Promise<void> | undefined;
  #types: ResourceType[] = [];
  #rediscoverAt: number | undefined;
  #lastHealth = '';
  #lastHealthAt = 0;
  /** When the next periodic report is due (it also keeps quiet scopes' progress fresh). */
  #nextPeriodicAt = 0;
  /** When a report held back by `healthChangeGapMs` is due. */
  #reportDueAt: number | undefined;
  #reconnects = 0;
  #resyncs = 0;
  /** Objects left out of the cache whose warning was logged. */
  readonly #leftOut = new Set<string>();

  constructor(account: HeldAccountView, deps: RunDeps) {
    this.#account = account;
    this.#deps = deps;
    this.#log = account.logger;
    const probeDeps = { cluster: account.cluster, clock: deps.clock, random: deps.random, log: this.#log, timing: deps.timing };
    // A change of the cluster's reachability is reported at once, not by the run's loop: the loop may
    // itself be waiting for the cluster (discovery read again during the outage).
    const lease = (deps.clusterProbes ?? new ClusterProbes()).acquire(probeDeps, () => {
      this.#report(deps.clock.now(), false, true);
      this.#waker.wake();
    });
    this.#probe = lease.probe;
    this.#releaseProbe = () => lease.release();
    this.#lastFailureSummaryAt = deps.clock.now();
    this.#resume = new ResumeClient({ host: deps.host, clock: deps.clock, account: account.name, cluster: progressSource(account.cluster.server, account.settings) });
    this.#batcher = new Batcher({
      account: account.name,
      cachingEpoch: account.cachingEpoch,
      host: deps.host,
      ...deps.batch,
      onLost: (e) => {
        this.#log.error({ err: (e as Error).message }, 'resource changes were not delivered to the driver; checking where the driver stands');
        this.#resyncs++;
        this.#waker.wake();
      },
      ...(deps.onSent === undefined ? {} : { onSent: deps.onSent }),
      onLeftOut: (c, problem) => {
        // Once per object while the cache runs, not at each of its changes.
        const key = `${c.kind}/${c.namespace}/${c.name}`;
        if (this.#leftOut.has(key) || this.#leftOut.size >= MAX_LEFT_OUT_LOGGED) return;
        this.#leftOut.add(key);
        this.#log.warn({ kind: c.kind, namespace: c.namespace, name: c.name.slice(0, 300), problem }, 'an object the driver cannot store is left out of the cache');
      },
    });
  }

  start(): void {
    this.#main = this.#run(this.#stop.signal).catch((e: unknown) => {
      if (!this.#stop.signal.aborted) this.#log.error({ err: e }, `the cache stopped unexpectedly: ${(e as Error).message}`);
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error('cache stopped'));
    this.#releaseProbe();
    this.#batcher.stop();
    await this.#main;
    await Promise.all([...this.#running.values()].map((r) => r.done));
    this.#running.clear();
    this.#clearGauges();
  }

  handleResumeInfo(info: ResumeInfo__Output): void {
    this.#resume.handle(info);
  }

  /** A new stream to the driver: once what was sent is acknowledged, check where the driver stands. */
  connected(): void {
    this.#reconnects++;
    this.#resume.connected();
    this.#waker.wake();
  }

  /** The scopes running now, for tests and health. */
  scopes(): CacheScope[] {
    return [...this.#running.values()].map((r) => r.reflector.scope);
  }

  /** Each running scope with what its reflector knows, for the agent's `/cache`. */
  scopeStates(): { scope: string; resourceVersion: string | undefined; state: Readonly<ScopeState> }[] {
    return [...this.#running.values()].map(({ reflector: r }) => ({ scope: r.id, resourceVersion: r.resourceVersion, state: r.state }));
  }

  /**
   * How far the cache is: scopes running, how many have a resourceVersion (listed or resumed), and
   * batches not yet acknowledged by the driver. Synced when every scope has one and nothing waits.
   */
  status(): { scopes: number; synced: number; backlog: number } {
    const all = [...this.#running.values()];
    return { scopes: all.length, synced: all.filter((r) => r.reflector.resourceVersion !== undefined).length, backlog: this.#batcher.backlog };
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { clock, timing } = this.#deps;
    const info = await this.#acceptedResume(signal);
    const selection = await this.#discover(signal);
    for (const bad of badCrdKinds(this.#account.settings)) {
      this.#log.warn({ kind: bad }, `customResourceDefinitions kind ${bad} is not of the form Kind.group; it is ignored`);
    }
    this.#apply(selection, info);
    let seenReconnects = this.#reconnects;
    let seenResyncs = this.#resyncs;
    let nextDiscovery = clock.now() + timing.rediscoverMs;
    while (!signal.aborted) {
      const now = clock.now();
      if (this.#reconnects !== seenReconnects || this.#resyncs !== seenResyncs) {
        seenReconnects = this.#reconnects;
        seenResyncs = this.#resyncs;
        await this.#batcher.drained();
        if (signal.aborted) return;
        this.#realign(await this.#acceptedResume(signal));
        continue;
      }
      if (now >= nextDiscovery || (this.#rediscoverAt !== undefined && now >= this.#rediscoverAt)) {
        this.#rediscoverAt = undefined;
        nextDiscovery = now + timing.rediscoverMs;
        this.#apply(await this.#discover(signal), undefined);
        continue;
      }
      const periodic = now >= this.#nextPeriodicAt;
      if (periodic) this.#nextPeriodicAt = now + timing.healthIntervalMs;
      this.#report(now, periodic);
      const wakeAt = Math.min(nextDiscovery, this.#rediscoverAt ?? Infinity, this.#nextPeriodicAt, this.#reportDueAt ?? Infinity);
      await this.#waker.wait(clock, wakeAt - now, signal);
    }
  }

  async #acceptedResume(signal: AbortSignal): Promise<ResumeInfo__Output> {
    const settings = this.#account.settings;
    for (;;) {
      const info = await this.#resume.query(this.#account.cachingEpoch, settings.maxResumableResourceAgeMs, signal);
      if (info.accepted) {
        this.#batcher.aligned(info.queryId);
        return info;
      }
      this.#log.warn({ cachingEpoch: this.#account.cachingEpoch, reason: info.message }, 'the driver does not accept this agent as the caching agent yet');
      await this.#deps.clock.sleep(this.#deps.timing.refusedRetryMs, signal);
    }
  }

  async #discover(signal: AbortSignal): Promise<Selection> {
    let failures = 0;
    for (;;) {
      try {
        const found = await discoverServedKinds(this.#account.cluster, signal);
        for (const f of found.failed) this.#log.warn({ groupVersion: f.groupVersion, err: f.error }, `discovery of ${f.groupVersion} failed; its kinds are not cached for now`);
        this.#types = found.types;
        return selectScopes(found.types, this.#account.settings);
      } catch (e) {
        signal.throwIfAborted();
        const outage = outageReasonOf(e);
        // While the cluster does not answer, its probe says so once; discovery goes on when it answers.
        if (outage !== undefined && (await this.#probe.waitFor(outage, e, signal))) {
          failures = 0;
          continue;
        }
        failures++;
        this.#log.warn({ err: (e as Error).message }, 'discovery failed; retrying');
        await this.#deps.clock.sleep(backoffDelay(cacheBackoff(this.#deps.timing), failures, this.#deps.random), signal);
      }
    }
  }

  /** Starts and stops reflectors to match `selection`, and tells the driver the new set of scopes. */
  #apply(selection: Selection, info: ResumeInfo__Output | undefined): void {
    // Discovery may answer after the cache was stopped: a reflector started then would never be stopped.
    if (this.#stop.signal.aborted) return;
    const wanted = new Map(selection.scopes.map((s) => [runKey(s), s]));
    for (const [key, r] of this.#running) {
      if (wanted.has(key)) continue;
      r.abort.abort(new Error('scope no longer cached'));
      this.#running.delete(key);
    }
    const resumeOf = (s: CacheScope) =>
      info?.scopes.find((r) => r.scope !== null && r.scope.group === s.type.group && r.scope.kind === s.type.kind && r.scope.namespace === s.namespace);
    const scopeSet: ResourceScope__Output[] = selection.scopes.map((s) => ({ group: s.type.group, kind: s.type.kind, namespace: s.namespace, synthetic: false }));
    if (selection.syntheticNamespaces.length > 0) scopeSet.push(SYNTHETIC_NAMESPACES);
    if (selection.syntheticCrds.length > 0) scopeSet.push(SYNTHETIC_CRDS);
    this.#batcher.scopeSet(scopeSet);
    this.#synthetic(selection);
    const started: string[] = [];
    for (const [key, scope] of wanted) {
      if (this.#running.has(key)) continue;
      const resume = resumeOf(scope);
      this.#startReflector(key, scope, resume === undefined ? undefined : { resourceVersion: resume.resourceVersion, objects: resume.objects });
      started.push(resume === undefined ? scopeId(scope) : `${scopeId(scope)} (resumed at ${resume.resourceVersion})`);
    }
    if (started.length > 0) this.#log.info({ scopes: started.length, resumed: started.filter((s) => s.includes('resumed')).length }, `caching ${started.length} scopes`);
  }

  #startReflector(key: string, scope: CacheScope, resume: { resourceVersion: string; objects: number } | undefined): void {
    const { metrics } = this.#deps;
    const account = this.#account.name;
    const kind = kindNameOfType(scope.type);
    const isCrd = scope.type.group === CRD_TYPE.group && scope.type.kind === CRD_TYPE.kind;
    const abort = new AbortController();
    const stopAll = () => abort.abort(this.#stop.signal.reason);
    this.#stop.signal.addEventListener('abort', stopAll, { once: true });
    const reflector = new Reflector(
      scope,
      {
        cluster: this.#account.cluster,
        clock: this.#deps.clock,
        random: this.#deps.random,
        lists: this.#deps.budget === undefined ? accountListSlots(this.#deps.lists, account) : budgetedListSlots(accountListSlots(this.#deps.lists, account), this.#deps.budget, account, scopeId(scope)),
        sink: this.#batcher,
        log: this.#log,
        watchList: this.#deps.watchList,
        timing: this.#deps.timing,
        ...(this.#deps.decoder === undefined ? {} : { decoder: this.#deps.decoder }),
        onEvent: (type, count) => {
          metrics?.watchEvents.inc({ account, kind, type }, count);
          if (isCrd && type !== 'BOOKMARK') this.#rediscoverSoon();
        },
        onList: () => metrics?.relists.inc({ account, kind }),
        onKindGone: () => this.#rediscoverSoon(),
        probe: this.#probe,
        onStateChange: () => this.#waker.wake(),
      },
      resume,
    );
    const done = reflector.run(abort.signal).finally(() => this.#stop.signal.removeEventListener('abort', stopAll));
    this.#running.set(key, { reflector, abort, done });
  }

  #rediscoverSoon(): void {
    if (this.#rediscoverAt !== undefined) return;
    this.#rediscoverAt = this.#deps.clock.now() + this.#deps.timing.rediscoverDebounceMs;
    this.#waker.wake();
  }

  /** Sends the synthetic namespaces and CRDs whole, each time the selection is applied. */
  #synthetic(selection: Selection): void {
    const send = (scope: ResourceScope__Output, objects: { name: string; json: string }[]) => {
      for (const o of objects) {
        void this.#batcher.change({ group: scope.group, kind: scope.kind, namespace: '', name: o.name, resourceVersion: '', deleted: false, object: o.json }, scope, objects.length);
      }
      void this.#batcher.sync(scope, '', objects.map((o) => o.name), objects.length);
    };
    if (selection.syntheticNamespaces.length > 0) {
      send(SYNTHETIC_NAMESPACES, selection.syntheticNamespaces.map((name) => ({ name, json: syntheticObject('v1', 'Namespace', name) })));
    }
    if (selection.syntheticCrds.length > 0) {
      send(
        SYNTHETIC_CRDS,
        selection.syntheticCrds.map((c) => {
          const name = `${c.plural}.${c.group}`;
          return { name, json: syntheticObject('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name, { group: c.group, names: { kind: c.kind, plural: c.plural }, scope: c.scope }) };
        }),
      );
    }
  }

  /**
   * After a reconnect (or a batch the connection gave up on): where the driver holds less than was
   * sent (it lost what it had not written yet), the scope starts again from what the driver holds;
   * where the driver holds nothing, the scope is listed again.
   */
  #realign(info: ResumeInfo__Output): void {
    let restarted = 0;
    for (const { reflector } of this.#running.values()) {
      const s = reflector.scope;
      const have = reflector.resourceVersion;
      if (have === undefined) continue;
      const driver = info.scopes.find((r) => r.scope !== null && r.scope.group === s.type.group && r.scope.kind === s.type.kind && r.scope.namespace === s.namespace);
      if (driver === undefined) {
        reflector.restartFrom(undefined);
        restarted++;
      } else if (isOlder(driver.resourceVersion, have)) {
        reflector.restartFrom(driver.resourceVersion);
        restarted++;
      }
    }
    if (restarted > 0) this.#log.info({ restarted }, 'the driver holds less than was sent for some scopes; they start again from where it stands');
  }

  #report(now: number, periodic: boolean, urgent = false): void {
    const kinds = summarize([...this.#running.values()].map((r) => ({ type: r.reflector.scope.type, state: r.reflector.state })));
    const { metrics } = this.#deps;
    for (const k of kinds) {
      const labels = { account: this.#account.name, kind: kindNameOfType(k) };
      metrics?.cacheObjects.set(labels, k.objects);
      metrics?.cacheBytes.set(labels, k.bytes);
      if (metrics !== undefined) recordKindCache(metrics, labels, k);
    }
    this.#summarizeFailures(now);
    const reachability = this.#probe.reachability;
    const fingerprint = `${healthFingerprint(kinds)}|${reachability.reachable}|${reachability.since}|${reachability.reason ?? ''}|${reachability.error ?? ''}`;
    if (fingerprint === this.#lastHealth && now - this.#lastHealthAt < this.#deps.timing.healthMaxAgeMs) return;
    const gap = this.#deps.timing.healthChangeGapMs;
    if (!periodic && !urgent && now - this.#lastHealthAt < gap) {
      this.#reportDueAt = this.#lastHealthAt + gap;
      return;
    }
    this.#reportDueAt = undefined;
    this.#lastHealth = fingerprint;
    this.#lastHealthAt = now;
    this.#batcher.health(healthMessage(kinds, now), clusterStatusMessage(reachability, now));
    if (!periodic) return;
    // The periodic report also keeps quiet scopes resumable: their progress is "seen now".
    for (const { reflector } of this.#running.values()) {
      const rv = reflector.resourceVersion;
      if (rv !== undefined) this.#batcher.progress({ group: reflector.scope.type.group, kind: reflector.scope.type.kind, namespace: reflector.scope.namespace, synthetic: false }, rv, reflector.state.objects);
    }
  }

  /** One line now and then for the scopes still failing on their own (each logged once when it began). */
  #summarizeFailures(now: number): void {
    if (now - this.#lastFailureSummaryAt < this.#deps.timing.failureSummaryMs) return;
    this.#lastFailureSummaryAt = now;
    const line = failingScopesLine([...this.#running.values()].map((r) => ({ id: r.reflector.id, state: r.reflector.state })));
    if (line !== undefined) this.#log.warn({ scopes: line.count }, line.message);
  }

  #clearGauges(): void {
    const { metrics } = this.#deps;
    if (metrics === undefined) return;
    for (const t of this.#types) {
      const labels = { account: this.#account.name, kind: kindNameOfType(t) };
      metrics.cacheObjects.remove(labels);
      metrics.cacheBytes.remove(labels);
      forgetKindCache(metrics, labels);
    }
  }
}

/** Whether resourceVersion `a` is older than `b`; versions that are not numbers are not compared. */
export function isOlder(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return a.length === b.length ? a < b : a.length < b.length;
}
