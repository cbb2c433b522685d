/**
 * One scope of the cache (a kind in a namespace, or everywhere): list, then watch from the list's
 * resourceVersion, for as long as the account is cached. It never stops on its own:
 *
 * - the first sync is a WatchList (`sendInitialEvents`) where the server offers it, otherwise a
 *   paged list; either ends with a sync of the scope's complete set of keys;
 * - watches ask for bookmarks and a timeout drawn between `minWatchTimeoutSeconds` and twice that,
 *   so a fleet of watches does not expire together; when one ends it starts again from the last
 *   resourceVersion seen;
 * - 410 Gone (an expired resourceVersion or continue token) lists this scope again at once;
 * - no answer from the cluster, or its credential refused (401), waits for the cluster's probe
 *   (cluster-probe.ts), which releases every scope of the cluster together when it answers again;
 * - any other failure waits with exponential backoff and jitter, for this scope only; it is logged
 *   when the scope starts failing and when it works again, not at every retry;
 * - a watchdog ends a watch that has been quiet past its own timeout (a stuck connection) and the
 *   loop starts a new one.
 *
 * The agent does not hold the objects: per key it remembers the last resourceVersion (and the size
 * of the compact form), which is enough to skip unchanged objects when it lists again.
 */
import { backoffDelay, type BackoffPolicy } from '../../shared/backoff.ts';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { ResourceChange__Output as ResourceChange, ResourceScope__Output as ResourceScope } from '../../shared/protocol/messages.ts';
import { kubeErrorStatus, kubeHttpError } from '../clusters/errors.ts';
import type { ClusterClient, KubeStream } from '../clusters/index.ts';
import type { Decoded, KindInfo } from './decode.ts';
import { inlineDecoder, type Decoder } from './decoder.ts';
import type { ListGate } from './list-gate.ts';
import { outageReasonOf, type ClusterProbe } from './cluster-probe.ts';
import { selectorQuery } from './cache-filter.ts';
import { apiVersionOf, collectionPath, objectKey, scopeId, type CacheScope } from './types.ts';

/** Where changes go; a returned promise asks the caller to wait (backpressure). */
export interface ChangeSink {
  change(c: ResourceChange, scope: ResourceScope, objects: number): Promise<void> | undefined;
  /** The scope's complete set of keys at `resourceVersion`. */
  sync(scope: ResourceScope, resourceVersion: string, keys: readonly string[], objects: number): Promise<void> | undefined;
  /** The scope has been observed up to `resourceVersion` (a bookmark, or a list with no change). */
  progress(scope: ResourceScope, resourceVersion: string, objects: number): void;
}

export interface ReflectorTiming {
  /** Items per list page. */
  pageSize: number;
  /** Watches ask the server to end them after this many seconds, up to twice as many. */
  minWatchTimeoutSeconds: number;
  /** A watch with nothing received for its timeout plus this is ended by the watchdog. */
  watchdogGraceMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

/** A cache loop's wait after `backoffInitialMs`, doubling to `backoffMaxMs`, each between half and one and a half of it. */
export function cacheBackoff(timing: Pick<ReflectorTiming, 'backoffInitialMs' | 'backoffMaxMs'>): BackoffPolicy {
  return { baseMs: timing.backoffInitialMs, maxMs: timing.backoffMaxMs, maxSteps: 20, jitter: [0.5, 1.5], round: true };
}

export const DEFAULT_TIMING: ReflectorTiming = {
  pageSize: 500,
  minWatchTimeoutSeconds: 300,
  watchdogGraceMs: 30_000,
  backoffInitialMs: 1000,
  backoffMaxMs: 60_000,
};

/** Whether the API server supports WatchList; learnt once per cluster, by the first list. */
export interface WatchListSupport {
  supported?: boolean;
  /** While the first WatchList is finding out, the others wait for its answer. */
  probing?: Promise<void>;
}

export interface ReflectorDeps {
  cluster: ClusterClient;
  clock: Clock;
  /** Uniform in [0, 1): backoff jitter and watch timeouts. */
  random: () => number;
  /** The agent's list gate, or its budgeted form (agent/tasks/budgeted-lists.ts). */
  lists: Pick<ListGate, 'acquire'>;
  sink: ChangeSink;
  log: Logger;
  watchList: WatchListSupport;
  timing: ReflectorTiming;
  /** Where watch lines and list pages are parsed and compacted (inline, or in threads). */
  decoder?: Decoder;
  /**
   * Told about the watch events handled, `count` of `type` at a time (for
   * `vendor_agent_watch_events_total`): after each batch of watch lines, and before waiting for the
   * driver to take changes.
   */
  onEvent?(type: string, count: number): void;
  /** Told about every full list (for `vendor_agent_relists_total`). */
  onList?(): void;
  /** The server no longer serves the kind (404): discovery should be read again. */
  onKindGone?(): void;
  /** Where the scope waits while its cluster does not answer or refuses the credential; its own backoff without. */
  probe?: ClusterProbe;
  /** Told when the scope starts or stops watching, fails or works again (so health is reported at once). */
  onStateChange?(): void;
}

/** What the cache knows of a scope, for health and metrics. */
export interface ScopeState {
  objects: number;
  /** Bytes of the compact forms of the objects seen since the last list. */
  bytes: number;
  watching: boolean;
  lastEventAt?: number;
  relists: number;
  /** Lists caused by 410 Gone. */
  expired: number;
  /** The error of the failure going on now; cleared once the scope works again (`lastErrorAt` stays). */
  lastError?: string;
  lastErrorAt?: number;
  /** The scope's failure of its own was logged and not yet its recovery. */
  failureLogged?: boolean;
}

interface Known {
  rv: string;
  size: number;
}

/** Batches of lines being decoded at once per watch: reading goes on while earlier ones decode. */
const DECODE_DEPTH = 3;

class Restart extends Error {}

interface OpenWatch {
  stream: KubeStream;
  timeoutSeconds: number;
}

function isGone(e: unknown): boolean {
  return kubeErrorStatus(e) === 410;
}

export class Reflector {
  readonly scope: CacheScope;
  readonly state: ScopeState = { objects: 0, bytes: 0, watching: false, relists: 0, expired: 0 };
  /** The next watch to open is news to operators: the first, or the first after a failure. */
  #reportNextWatch = true;
  readonly #deps: ReflectorDeps;
  readonly #ref: ResourceScope;
  readonly #info: KindInfo;
  readonly #decoder: Decoder;
  #rv: string | undefined;
  /** Every object sent for the scope, at the version sent: an object seen again at that version is not sent twice. */
  #known = new Map<string, Known>();
  /** Watch events handled and not yet told to `onEvent`, by type. */
  readonly #events = new Map<string, number>();
  /** True once `#known` holds every object of the scope (after a list). */
  #complete = false;
  #attempt: AbortController | undefined;
  #restartTo: { rv: string | undefined } | undefined;

  constructor(scope: CacheScope, deps: ReflectorDeps, resume?: { resourceVersion: string; objects: number }) {
    this.scope = scope;
    this.#deps = deps;
    this.#ref = { group: scope.type.group, kind: scope.type.kind, namespace: scope.namespace, synthetic: false };
    this.#info = { kind: scope.type.kind, group: scope.type.group, apiVersion: apiVersionOf(scope.type) };
    this.#decoder = deps.decoder ?? inlineDecoder;
    if (resume !== undefined && resume.resourceVersion !== '') {
      this.#rv = resume.resourceVersion;
      this.state.objects = resume.objects;
    }
  }

  /** The resourceVersion the scope has been observed to; undefined before the first list. */
  get resourceVersion(): string | undefined {
    return this.#rv;
  }

  get id(): string {
    return scopeId(this.scope);
  }

  /** Starts again from `rv` (the driver holds less than was sent), or with a list when undefined. */
  restartFrom(rv: string | undefined): void {
    // The versions known are what was sent, and the driver lost some of it: every object the replay
    // (or the list) brings must go out again, even at a version sent before. Sizes stay for the counts.
    this.#known = new Map([...this.#known].map(([key, k]) => [key, { rv: '', size: k.size }]));
    this.#restartTo = { rv };
    this.#attempt?.abort(new Restart('restart'));
  }

  async run(signal: AbortSignal): Promise<void> {
    const { log } = this.#deps;
    let failures = 0;
    while (!signal.aborted) {
      if (this.#restartTo !== undefined) {
        this.#rv = this.#restartTo.rv;
        this.#restartTo = undefined;
      }
      const attempt = new AbortController();
      const onAbort = () => attempt.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#attempt = attempt;
      try {
        const healthy = this.#rv === undefined ? await this.#list(attempt.signal) : await this.#watch(this.#rv, attempt.signal);
        failures = healthy ? 0 : failures + 1;
        if (!healthy) await this.#sleep(this.#backoff(failures), signal);
      } catch (e) {
        if (signal.aborted) break;
        if (this.#restartTo !== undefined) continue;
        if (isGone(e)) {
          this.state.expired++;
          log.info({ scope: this.id, err: (e as Error).message }, 'resourceVersion expired; listing the scope again');
          this.#rv = undefined;
          continue;
        }
        const outage = outageReasonOf(e);
        this.#failed(e, outage !== undefined);
        if (outage !== undefined && this.#deps.probe !== undefined) {
          let ended: boolean;
          try {
            ended = await this.#deps.probe.waitFor(outage, e, signal);
          } catch {
            break;
          }
          // The cluster was down and is back: this scope was never at fault, its backoff starts over.
          if (ended) {
            failures = 0;
            continue;
          }
        }
        failures++;
        if (kubeErrorStatus(e) === 404) this.#deps.onKindGone?.();
        await this.#sleep(this.#backoff(failures), signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
        this.#attempt = undefined;
        this.#setWatching(false);
      }
    }
  }

  /**
   * Records a failure. The cluster's own failures are logged by its probe, once per outage; a scope's
   * own failure once when it starts (the cache run sums up those still failing now and then).
   */
  #failed(e: unknown, ofCluster = false): void {
    const message = (e as Error).message;
    const wasFailing = this.state.lastError !== undefined;
    this.state.lastError = message;
    this.#reportNextWatch = true;
    if (!wasFailing) this.#deps.onStateChange?.();
    this.state.lastErrorAt = this.#deps.clock.now();
    if (ofCluster || this.state.failureLogged === true) return;
    this.state.failureLogged = true;
    this.#deps.log.warn({ scope: this.id, err: message }, `cache of ${this.id} failed; retrying with backoff (logged again when it works)`);
  }

  /**
   * Operators are told when the scope first watches, and when it watches again after a failure; a
   * watch that ends and opens again on its own (its timeout) is routine and reported with the next
   * periodic report, so it costs no health write of its own.
   */
  #setWatching(watching: boolean): void {
    if (this.state.watching === watching) return;
    this.state.watching = watching;
    if (!watching || !this.#reportNextWatch) return;
    this.#reportNextWatch = false;
    this.#deps.onStateChange?.();
  }

  /** The server answered this scope's request: a failure before is over. */
  #worked(): void {
    if (this.state.lastError === undefined) return;
    delete this.state.lastError;
    this.#deps.onStateChange?.();
    if (this.state.failureLogged === true) {
      this.state.failureLogged = false;
      this.#deps.log.info({ scope: this.id }, `cache of ${this.id} works again`);
    }
  }

  #backoff(failures: number): number {
    return backoffDelay(cacheBackoff(this.#deps.timing), failures, this.#deps.random);
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    try {
      await this.#deps.clock.sleep(ms, signal);
    } catch {
      // stopping
    }
  }

  #watchTimeoutSeconds(): number {
    const min = this.#deps.timing.minWatchTimeoutSeconds;
    return Math.floor(min * (1 + this.#deps.random()));
  }

  // ---- lists ----

  /** A full list of the scope, as a WatchList that goes on watching, or a paged list. */
  async #list(signal: AbortSignal): Promise<boolean> {
    // The larger the list, the sooner it should start (list-gate.ts): a scope listing again is weighed
    // by what its last list held; a first list, whose size is not known, by 0.
    const release = await this.#deps.lists.acquire(signal, this.#complete ? this.#known.size : 0);
    try {
      this.state.relists++;
      this.#deps.onList?.();
      if (this.#deps.watchList.supported !== false) {
        const watched = await this.#watchList(signal, release);
        if (watched !== 'unsupported') return watched;
      }
      await this.#pagedList(signal, release);
      return true;
    } finally {
      release();
    }
  }

  async #pagedList(signal: AbortSignal, listed: () => void): Promise<void> {
    const { cluster, timing } = this.#deps;
    const seen = new Map<string, Known>();
    let listRv: string | undefined;
    let cont: string | undefined;
    do {
      const res = await cluster.request({ path: collectionPath(this.scope), query: { ...selectorQuery(this.scope), limit: timing.pageSize, continue: cont }, signal });
      this.#worked();
      const page = await this.#decoder.list(res.body.toString('utf8'), this.#info);
      listRv ??= page.resourceVersion;
      for (const item of page.items) {
        const wait = this.#listed(item, seen);
        if (wait !== undefined) await wait;
      }
      cont = page.continue;
    } while (cont !== undefined);
    if (listRv === undefined) throw new VendorError('unavailable', `the list of ${this.id} carries no resourceVersion`);
    await this.#listDone(listRv, seen, listed);
  }

  /** An object of a list (or of a WatchList's initial events): sent unless the agent has seen this version. */
  #listed(item: Decoded, seen: Map<string, Known>): Promise<void> | undefined {
    const key = objectKey(item.namespace, item.name);
    const rv = item.resourceVersion;
    const before = this.#known.get(key);
    if (before !== undefined && before.rv === rv) {
      seen.set(key, before);
      return undefined;
    }
    const compact = item.compact ?? '';
    seen.set(key, { rv, size: compact.length });
    return this.#deps.sink.change(
      { group: this.#ref.group, kind: this.#ref.kind, namespace: item.namespace, name: item.name, resourceVersion: rv, deleted: false, object: compact },
      this.#ref,
      seen.size,
    );
  }

  /**
   * The list is complete: its keys go to the sink, and `listed` gives its slot of the list gate to the
   * next list before waiting for the driver to take the batches. The slot bounds the parsing of lists
   * at once, which is over; held while the driver is busy, it would make every account's first list
   * wait for the batches of four others to be taken, and an agent with many accounts sync one
   * driver round trip after another.
   */
  async #listDone(listRv: string, seen: Map<string, Known>, listed: () => void): Promise<void> {
    this.#known = seen;
    this.#complete = true;
    this.#rv = listRv;
    this.#recount();
    const wait = this.#deps.sink.sync(this.#ref, listRv, [...seen.keys()], seen.size);
    listed();
    if (wait !== undefined) await wait;
  }

  /** After a list: the counts from the new set of keys (watch events then adjust them one by one). */
  #recount(): void {
    this.state.objects = this.#known.size;
    let bytes = 0;
    for (const k of this.#known.values()) bytes += k.size;
    this.state.bytes = bytes;
  }

  /** WatchList: initial events, the initial-events-end bookmark, then an ordinary watch on the same stream. */
  async #watchList(signal: AbortSignal, listed: () => void): Promise<boolean | 'unsupported'> {
    const support = this.#deps.watchList;
    while (support.supported === undefined && support.probing !== undefined) await support.probing;
    if (support.supported === false) return 'unsupported';
    let answered = () => {};
    if (support.supported === undefined) {
      support.probing = new Promise<void>((resolve) => (answered = resolve)).finally(() => (support.probing = undefined));
    }
    let stream: OpenWatch;
    try {
      stream = await this.#open({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }, signal);
      // The server took the request; if it did not know WatchList it would have refused it.
      support.supported = true;
    } catch (e) {
      const status = kubeErrorStatus(e);
      if (status === 400 || status === 422) {
        support.supported = false;
        this.#deps.log.info({ server: this.#deps.cluster.server }, 'the API server offers no WatchList; lists are paged');
        return 'unsupported';
      }
      throw e;
    } finally {
      answered();
    }
    const seen = new Map<string, Known>();
    let initial = true;
    // Not an async function: after the initial events each event is handled without a promise of its
    // own (one per watch event in a burst), and only backpressure makes the reader wait.
    return this.#consume(stream, signal, (ev) => {
      if (!initial) return this.#event(ev);
      if (ev.type === 'ADDED') return this.#listed(ev, seen);
      if (ev.type === 'BOOKMARK' && ev.initialEventsEnd === true) {
        initial = false;
        // Watching from here on: a scope whose initial events are still coming is listing, in
        // health as in /cache, so "every scope watching" means every scope listed.
        return this.#listDone(ev.resourceVersion, seen, () => {
          listed();
          this.#setWatching(true);
        });
      }
      return this.#event(ev);
    }, () => {
      if (initial) throw new VendorError('unavailable', `the WatchList of ${this.id} ended before its initial events were complete`);
    }, false);
  }

  // ---- watches ----

  async #open(query: Record<string, string | boolean>, signal: AbortSignal): Promise<OpenWatch> {
    const timeoutSeconds = this.#watchTimeoutSeconds();
    const stream = await this.#deps.cluster.stream({
      path: collectionPath(this.scope),
      query: { ...selectorQuery(this.scope), watch: 1, allowWatchBookmarks: true, timeoutSeconds, ...query },
      signal,
    });
    this.#worked();
    return { stream, timeoutSeconds };
  }

  async #watch(from: string, signal: AbortSignal): Promise<boolean> {
    const stream = await this.#open({ resourceVersion: from }, signal);
    return this.#consume(stream, signal, (ev) => this.#event(ev), () => undefined);
  }

  /**
   * Reads a watch stream until it ends, with the watchdog. True when the watch was healthy (it
   * delivered something, or lasted); false for one that ended at once with nothing, so the loop
   * backs off instead of spinning.
   */
  async #consume(
    { stream, timeoutSeconds }: OpenWatch,
    signal: AbortSignal,
    handle: (ev: Decoded) => Promise<void> | undefined,
    ended: () => void,
    watchingFromStart = true,
  ): Promise<boolean> {
    const { clock, timing } = this.#deps;
    const timeoutMs = timeoutSeconds * 1000 + timing.watchdogGraceMs;
    const startedAt = clock.now();
    let lastActivity = startedAt;
    let lines = 0;
    let silent = false;
    const stopWatchdog = new AbortController();
    const onAbort = () => stream.close();
    signal.addEventListener('abort', onAbort, { once: true });
    const watchdog = (async () => {
      for (;;) {
        const wait = lastActivity + timeoutMs - clock.now();
        if (wait <= 0) {
          silent = true;
          stream.close();
          return;
        }
        try {
          await clock.sleep(wait, stopWatchdog.signal);
        } catch {
          return;
        }
      }
    })();
    // Batches decode while the next ones are read, and their events are handled, in the order they
    // came, as soon as each is decoded; reading waits while DECODE_DEPTH batches are not handled yet.
    const queue: Promise<Decoded[]>[] = [];
    let readerDone = false;
    let handlerFailure: { error: unknown } | undefined;
    let handlerDone = false;
    let wakeHandler: (() => void) | undefined;
    let wakeReader: (() => void) | undefined;
    const handler = (async () => {
      for (;;) {
        const next = queue[0];
        if (next === undefined) {
          if (readerDone) return;
          await new Promise<void>((r) => (wakeHandler = r));
          continue;
        }
        try {
          for (const ev of await next) {
            // Events already read ahead are dropped once the scope is stopped: nothing goes out after that.
            if (signal.aborted) return;
            const wait = handle(ev);
            if (wait !== undefined) {
              this.#reportEvents();
              await wait;
            }
          }
        } finally {
          this.#reportEvents();
        }
        queue.shift();
        wakeReader?.();
      }
    })()
      .catch((error: unknown) => {
        handlerFailure = { error };
        stream.close();
      })
      .finally(() => {
        // However the handler ends (the scope stopped, a failure), a reader waiting for room must not wait on.
        handlerDone = true;
        wakeReader?.();
      });
    if (watchingFromStart) this.#setWatching(true);
    try {
      for await (const batch of stream.batches) {
        if (signal.aborted || handlerDone) break;
        lastActivity = clock.now();
        lines++;
        queue.push(this.#decoder.batch(batch, this.#info));
        wakeHandler?.();
        while (queue.length >= DECODE_DEPTH && !handlerDone) await new Promise<void>((r) => (wakeReader = r));
      }
    } finally {
      readerDone = true;
      wakeHandler?.();
      this.#setWatching(false);
      stopWatchdog.abort();
      signal.removeEventListener('abort', onAbort);
      stream.close();
      await watchdog;
      await handler;
      // What was still decoding is not wanted; its failures are not either.
      for (const d of queue) d.catch(() => undefined);
    }
    if (handlerFailure !== undefined) throw handlerFailure.error;
    if (signal.aborted) throw signal.reason;
    ended();
    if (silent) {
      this.#failed(new VendorError('timeout', `the watch of ${this.id} received nothing for ${timeoutMs} ms; started again`));
      return true;
    }
    return lines > 0 || clock.now() - startedAt >= 1000;
  }

  /**
   * Tells `onEvent` the events handled since it was last told, by type: once per batch of watch
   * lines, or before waiting for the driver, instead of once per event (a metric update per event
   * cost a label lookup and its garbage in a burst).
   */
  #reportEvents(): void {
    if (this.#events.size === 0) return;
    for (const [type, count] of this.#events) this.#deps.onEvent?.(type, count);
    this.#events.clear();
  }

  /** One watch event after the initial list. */
  #event(ev: Decoded): Promise<void> | undefined {
    const { sink, clock } = this.#deps;
    const rv = ev.resourceVersion;
    if (ev.malformed === true) throw new VendorError('unavailable', `the watch of ${this.id} sent a line that is not JSON`);
    this.#events.set(ev.type, (this.#events.get(ev.type) ?? 0) + 1);
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        this.state.lastEventAt = clock.now();
        this.#rv = rv;
        const key = objectKey(ev.namespace, ev.name);
        const before = this.#known.get(key);
        if (before !== undefined && before.rv === rv) return undefined;
        const compact = ev.compact ?? '';
        this.#known.set(key, { rv, size: compact.length });
        this.state.bytes += compact.length - (before?.size ?? 0);
        if (this.#complete) this.state.objects = this.#known.size;
        else if (before === undefined && ev.type === 'ADDED') this.state.objects++;
        return sink.change(
          { group: this.#ref.group, kind: this.#ref.kind, namespace: ev.namespace, name: ev.name, resourceVersion: rv, deleted: false, object: compact },
          this.#ref,
          this.state.objects,
        );
      }
      case 'DELETED': {
        this.state.lastEventAt = clock.now();
        this.#rv = rv;
        const key = objectKey(ev.namespace, ev.name);
        const had = this.#known.get(key);
        if (had !== undefined) {
          this.#known.delete(key);
          this.state.bytes -= had.size;
        }
        if (this.#complete) this.state.objects = this.#known.size;
        else if (this.state.objects > 0) this.state.objects--;
        return sink.change(
          { group: this.#ref.group, kind: this.#ref.kind, namespace: ev.namespace, name: ev.name, resourceVersion: rv, deleted: true, object: '' },
          this.#ref,
          this.state.objects,
        );
      }
      case 'BOOKMARK':
        if (rv !== '') {
          this.#rv = rv;
          sink.progress(this.#ref, rv, this.state.objects);
        }
        return undefined;
      case 'ERROR': {
        const status = ev.status ?? { code: 500, body: '' };
        throw kubeHttpError(this.#deps.cluster.account, 'WATCH', collectionPath(this.scope), status.code, Buffer.from(status.body));
      }
      default:
        throw new VendorError('unavailable', `the watch of ${this.id} sent an event of unknown type ${ev.type}`);
    }
  }
}
