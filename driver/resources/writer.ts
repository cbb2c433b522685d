/**
 * Writes one account's resource changes into the table (docs/cache.md). Batches from the caching
 * agent are taken into memory, where repeated changes of one object coalesce into its latest state;
 * a flush loop writes what is waiting with BatchWriteItem, several requests at a time, then applies
 * the bookkeeping that must follow those writes, in the order it came:
 *
 * - a sync (the complete set of a scope's keys after a list) deletes the scope's items the list did
 *   not name, except those changed after the sync arrived (here, or at another replica);
 * - a new set of scopes deletes the items and progress of scopes no longer cached;
 * - progress (where a scope's watch can resume) is recorded only once every change before it is in
 *   the table, so a resume from it never skips a change; per scope at most every
 *   `progressIntervalMs`, except right after a sync.
 *
 * The agent's batch is acknowledged once taken (not once written): when `maxPending` objects wait,
 * taking a batch with a new object waits for the flush, which pushes back on the agent. What a
 * crash loses between acknowledgement and write is replayed by the agent, which resumes from the
 * progress the table holds.
 */
import { backoffDelay } from '../../shared/backoff.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { ClusterStatusRecord } from '../../shared/accounts/model.ts';
import { putClusterStatus } from '../../shared/table/accounts/cluster-status.ts';
import type { ClusterStatus__Output, KindHealth__Output, ResourceEvents__Output, ResourceScope__Output } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import {
  deleteScopeProgress,
  putScopeProgressMany,
  putScopesSeen,
  scopeProgress,
  type ScopeProgressRecord,
} from '../../shared/table/resources/scopes.ts';
import { kindPrefix, progressSk, resourceSk, scopePrefix, type Scope } from '../../shared/table/resources/keys.ts';
import { readScopeSet, replaceScopeSet } from '../../shared/table/resources/scope-set.ts';
import { scopesOf } from '../../shared/table/resources/scope-set-kinds.ts';
import { putCacheHealth, type KindHealthRecord } from '../../shared/table/resources/health.ts';
import { scopeKeys, writeResources, type ResourceWrite, type StoredResourceKey } from '../../shared/table/resources/objects.ts';
import { Waker } from '../../shared/waker.ts';

export interface WriterOptions {
  table: TableRef;
  clock: Clock;
  log: Logger;
  /** Objects waiting to be written before taking more waits. */
  maxPending?: number;
  /** BatchWriteItem requests in flight at once. */
  parallel?: number;
  progressIntervalMs?: number;
  /** Wait after a failed flush before trying again (doubling up to 30 s). */
  retryMs?: number;
  /** Hears of every write that reached the table, with the time from taking each change (ms). */
  onWritten?: ((lagsMs: readonly number[]) => void) | undefined;
  /** Hears of every write the table refused for good and that was dropped, by what it was. */
  onDropped?: ((write: DroppedWrite) => void) | undefined;
}

/** What a write the table refused for good was (`vendor_driver_resource_writes_dropped_total`). */
export type DroppedWrite = 'object' | 'cache_health' | 'cluster_status' | 'scope_step';

export interface WriterStats {
  /** Changes taken from the agent. */
  changes: number;
  /** Changes replaced by a later change of the same object before being written. */
  coalesced: number;
  /** Objects written or deleted. */
  written: number;
  /** Deleted by syncs and scope changes. */
  swept: number;
  requests: number;
  flushes: number;
  /** From taking a change to its write, over every write: sum and maximum (ms). */
  lagTotalMs: number;
  lagMaxMs: number;
  failures: number;
  /** Writes the table refused for good, dropped (`#dropIfRefused`). */
  dropped: number;
}

interface Pending {
  write: ResourceWrite;
  /** When the oldest change folded into this write was taken. */
  takenAt: number;
}

type Step =
  | { type: 'sync'; seq: number; scope: Scope; keys: Set<string>; after: Set<string>; takenAt: number }
  | { type: 'unsynced'; seq: number; scope: Scope }
  | { type: 'scopes'; seq: number; scopes: Scope[] };

interface SyncParts {
  scope: Scope;
  parts: Set<number>;
  keys: Set<string>;
  after: Set<string>;
}

interface ProgressEntry {
  record: ScopeProgressRecord;
  seq: number;
  force: boolean;
}

/** The table's answer to a request it will never take as it is (DynamoDB's ValidationException). */
const refusedForGood = (e: unknown): boolean => (e as { name?: unknown } | null)?.name === 'ValidationException';
/** Longest error text kept of a kind's health or a cluster's status; agents send less. */
const MAX_STORED_ERROR = 1000;

const keyOf = (namespace: string, name: string) => (namespace === '' ? name : `${namespace}/${name}`);
const scopeKey = (s: Scope) => `${s.group}/${s.kind}/${s.namespace}`;
const toScope = (s: ResourceScope__Output | null): Scope => ({ group: s?.group ?? '', kind: s?.kind ?? '', namespace: s?.namespace ?? '' });

export class AccountCacheWriter {
  readonly account: string;
  readonly stats: WriterStats = { changes: 0, coalesced: 0, written: 0, swept: 0, requests: 0, flushes: 0, lagTotalMs: 0, lagMaxMs: 0, failures: 0, dropped: 0 };
  readonly #o: Required<Omit<WriterOptions, 'onWritten' | 'onDropped'>> & Pick<WriterOptions, 'onWritten' | 'onDropped'>;
  #pending = new Map<string, Pending>();
  #steps: Step[] = [];
  readonly #progress = new Map<string, ProgressEntry>();
  readonly #progressWrittenAt = new Map<string, number>();
  /** What this writer last stored of each scope's progress, and which of those were seen current since. */
  readonly #progressStored = new Map<string, ScopeProgressRecord>();
  readonly #seen = new Map<string, ScopeProgressRecord>();
  /** Scopes whose progress is recorded at the next flush regardless of the interval (after a sync). */
  readonly #forceNext = new Set<string>();
  /** Scopes whose last sync arrived incomplete: no progress is recorded until a complete one. */
  readonly #unsynced = new Set<string>();
  /** Syncs being received or waiting to be applied: changes of their scope after them are kept. */
  readonly #syncs = new Map<string, SyncParts>();
  readonly #openSyncs: { prefix: string; after: Set<string> }[] = [];
  #health: { agentId: string; cachingEpoch: number; kinds: KindHealth__Output[]; at: number } | undefined;
  #cluster: { agentId: string; cachingEpoch: number; status: ClusterStatusRecord } | undefined;
  #seq = 0;
  #flushing = false;
  readonly #work = new Waker();
  readonly #space = new Waker();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  #idle: (() => void)[] = [];

  constructor(account: string, options: WriterOptions) {
    this.account = account;
    this.#o = { maxPending: 50_000, parallel: 8, progressIntervalMs: 5000, retryMs: 500, ...options };
    this.#loop = this.#run();
  }

  /**
   * Takes one batch; resolves once it is held (waits while too much is waiting to be written).
   * `cluster` is the API server its progress is of, recorded with it.
   */
  async take(batch: ResourceEvents__Output, agentId: string, cluster = ''): Promise<void> {
    // Only new objects make the map grow: changes of objects already waiting replace them and never wait.
    while (this.#pending.size >= this.#o.maxPending && !this.#stop.signal.aborted && batch.changes.some((c) => !this.#pending.has(resourceSk(c)))) {
      await this.#space.wait(this.#o.clock, Infinity, this.#stop.signal);
    }
    const now = this.#o.clock.now();
    for (const c of batch.changes) {
      const ref = { group: c.group, kind: c.kind, namespace: c.namespace, name: c.name };
      const sk = resourceSk(ref);
      const before = this.#pending.get(sk);
      if (before !== undefined) this.stats.coalesced++;
      this.#pending.set(sk, {
        write: c.deleted ? { op: 'delete', ref } : { op: 'put', ref, resourceVersion: c.resourceVersion, object: c.object, at: now },
        takenAt: before?.takenAt ?? now,
      });
      for (const open of this.#openSyncs) if (sk.startsWith(open.prefix)) open.after.add(sk);
    }
    this.stats.changes += batch.changes.length;
    this.#seq++;
    for (const s of batch.syncs) this.#takeSync(s, now);
    if (batch.scopeSet) this.#steps.push({ type: 'scopes', seq: this.#seq, scopes: batch.scopeSet.scopes.map(toScope) });
    for (const p of batch.progress) {
      const scope = toScope(p.scope);
      const key = scopeKey(scope);
      const force = this.#progress.get(key)?.force ?? false;
      this.#progress.set(key, { record: { scope, resourceVersion: p.resourceVersion, objects: p.objects, cluster, at: now }, seq: this.#seq, force });
    }
    if (batch.health.length > 0) this.#health = { agentId, cachingEpoch: batch.cachingEpoch, kinds: batch.health, at: now };
    if (batch.clusterStatus) this.#cluster = { agentId, cachingEpoch: batch.cachingEpoch, status: clusterStatusRecord(batch.clusterStatus, agentId, now) };
    this.#work.wake();
  }

  #takeSync(s: ResourceEvents__Output['syncs'][number], takenAt: number): void {
    const scope = toScope(s.scope);
    const id = `${scopeKey(scope)}#${s.listId}`;
    let parts = this.#syncs.get(id);
    if (parts === undefined) {
      parts = { scope, parts: new Set(), keys: new Set(), after: new Set() };
      this.#syncs.set(id, parts);
      this.#openSyncs.push({ prefix: scopePrefix(scope), after: parts.after });
    }
    parts.parts.add(s.part);
    for (const k of s.keys) parts.keys.add(k);
    if (!s.last) return;
    this.#syncs.delete(id);
    const complete = parts.parts.size === s.part;
    if (complete) this.#unsynced.delete(scopeKey(scope));
    else this.#unsynced.add(scopeKey(scope));
    this.#steps.push(
      complete ? { type: 'sync', seq: this.#seq, scope, keys: parts.keys, after: parts.after, takenAt } : { type: 'unsynced', seq: this.#seq, scope },
    );
    const key = scopeKey(scope);
    const entry = this.#progress.get(key);
    if (entry !== undefined) entry.force = true;
    else this.#forceNext.add(key);
  }

  /** Objects waiting to be written. */
  get waiting(): number {
    return this.#pending.size;
  }

  /** Progress not yet recorded in the table, for answering a resume query on this replica. */
  pendingProgress(): ScopeProgressRecord[] {
    return [...this.#progress.values()].map((p) => p.record);
  }

  /** Resolves when everything taken so far is written. */
  idle(): Promise<void> {
    if (this.#quiet()) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Writes what is held, then stops. */
  async close(): Promise<void> {
    await this.idle();
    this.#stop.abort();
    this.#work.wake();
    await this.#loop;
  }

  /** Nothing waits to be written except progress held back by its interval. */
  #quiet(): boolean {
    return this.#pending.size === 0 && this.#steps.length === 0 && this.#health === undefined && this.#cluster === undefined && !this.#flushing && this.#progressDueIn() > 0;
  }

  async #run(): Promise<void> {
    const { clock } = this.#o;
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      const dueIn = this.#progressDueIn();
      if (this.#pending.size === 0 && this.#steps.length === 0 && this.#health === undefined && this.#cluster === undefined && dueIn > 0) {
        for (const i of this.#idle.splice(0)) i();
        await this.#work.wait(clock, dueIn, this.#stop.signal);
        continue;
      }
      this.#flushing = true;
      try {
        await this.#flush();
        failures = 0;
      } catch (e) {
        failures++;
        this.stats.failures++;
        this.#o.log.error({ account: this.account, err: e }, `writing the resource cache failed; retrying: ${(e as Error).message}`);
        await clock.sleep(backoffDelay({ baseMs: this.#o.retryMs, maxMs: 30_000, maxSteps: 10 }, failures), this.#stop.signal).catch(() => undefined);
      } finally {
        this.#flushing = false;
      }
      if (this.#quiet()) for (const i of this.#idle.splice(0)) i();
    }
  }

  /** How long until a held progress entry may be written; 0 when one may be now, Infinity for none. */
  #progressDueIn(): number {
    let due = Infinity;
    const now = this.#o.clock.now();
    for (const [key, p] of this.#progress) {
      if (p.force || this.#forceNext.has(key)) return 0;
      const last = this.#progressWrittenAt.get(key);
      if (last === undefined) return 0;
      due = Math.min(due, Math.max(0, last + this.#o.progressIntervalMs - now));
    }
    return due;
  }

  async #flush(): Promise<void> {
    const { table, clock } = this.#o;
    const seq = this.#seq;
    const snapshot = this.#pending;
    this.#pending = new Map();
    this.#space.wake();
    this.stats.flushes++;
    try {
      let writes = [...snapshot.values()];
      if (writes.length > 0) {
        await writeResources(table, this.account, writes.map((w) => w.write), this.#o.parallel).catch(async (e: unknown) => {
          if (!refusedForGood(e)) throw e;
          writes = await this.#writeEachKeeping(writes);
        });
        const now = clock.now();
        const lags = writes.map((w) => now - w.takenAt);
        for (const lag of lags) {
          this.stats.lagTotalMs += lag;
          if (lag > this.stats.lagMaxMs) this.stats.lagMaxMs = lag;
        }
        this.#o.onWritten?.(lags);
        this.stats.written += writes.length;
        this.stats.requests += Math.ceil(writes.length / 25);
      }
    } catch (e) {
      // Put back what was not written, under anything newer taken meanwhile.
      for (const [sk, w] of snapshot) if (!this.#pending.has(sk)) this.#pending.set(sk, w);
      throw e;
    }
    const ready = () => this.#steps.length > 0 && this.#steps[0]!.seq <= seq;
    while (ready()) {
      const keys = this.#readSyncKeys(seq);
      if (keys.size > 0) {
        // The syncs at the head, together; they leave the steps only once applied.
        await this.#applySyncs(keys);
        this.#steps.splice(0, keys.size);
        continue;
      }
      const step = this.#steps[0]!;
      await this.#dropIfRefused('scope_step', step.type === 'scopes' ? 'the scope set' : `the ${step.type} step of ${scopeKey(step.scope)}`, () => this.#apply(step));
      this.#steps.shift();
    }
    await this.#writeProgress(seq);
    const health = this.#health;
    if (health !== undefined) {
      await this.#dropIfRefused('cache_health', 'the cache health', () =>
        putCacheHealth(table, this.account, {
          agentId: health.agentId,
          cachingEpoch: health.cachingEpoch,
          at: health.at,
          kinds: health.kinds.map((k) => healthRecord(k, health.at)),
        }),
      );
      if (this.#health === health) this.#health = undefined;
    }
    const cluster = this.#cluster;
    if (cluster !== undefined) {
      // Refused when the caching role moved on meanwhile: the new caching agent reports its own.
      await this.#dropIfRefused('cluster_status', 'the cluster status', () => putClusterStatus(table, this.account, cluster.agentId, cluster.cachingEpoch, cluster.status));
      if (this.#cluster === cluster) this.#cluster = undefined;
    }
  }

  /**
   * Runs one write; one the table refuses for good (an item or key larger than it takes) is logged
   * and dropped (false). Retried, it would hold every later change of the account behind it forever. The
   * driver's checks of what agents send keep such writes out (docs/protocol.md#resource-keys); this
   * is what is left when one gets through.
   */
  async #dropIfRefused(kind: DroppedWrite, what: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (e) {
      if (!refusedForGood(e)) throw e;
      this.stats.dropped++;
      this.#o.onDropped?.(kind);
      this.#o.log.error({ account: this.account, err: e }, `the table refuses ${what} for good; dropped: ${(e as Error).message}`);
      return false;
    }
  }

  /** Objects one at a time, after the table refused a batch of them for good: only the refused ones are dropped; the written ones are returned. */
  async #writeEachKeeping(writes: Pending[]): Promise<Pending[]> {
    const written: Pending[] = [];
    for (const w of writes) {
      const { kind, namespace, name } = w.write.ref;
      if (await this.#dropIfRefused('object', `the object ${kind} ${namespace}/${name.slice(0, 300)}`, () => writeResources(this.#o.table, this.account, [w.write], 1))) written.push(w);
    }
    return written;
  }

  /**
   * The stored keys of the syncs at the head of the steps, read at once rather than one sync after
   * another (a first sync brings every scope's together): only syncs of scopes that do not overlap,
   * up to the first other step, so no read sees the table before a step ahead of it changed it; at
   * most `parallel` at a time.
   */
  #readSyncKeys(seq: number): Map<Step, Promise<StoredResourceKey[]>> {
    const reads = new Map<Step, Promise<StoredResourceKey[]>>();
    const prefixes: string[] = [];
    for (const step of this.#steps) {
      if (step.seq > seq || step.type !== 'sync' || reads.size >= this.#o.parallel) break;
      const prefix = scopePrefix(step.scope);
      if (prefixes.some((p) => p.startsWith(prefix) || prefix.startsWith(p))) break;
      prefixes.push(prefix);
      const read = scopeKeys(this.#o.table, this.account, prefix);
      // A failed read fails its step's apply, which is where it is awaited.
      read.catch(() => undefined);
      reads.set(step, read);
    }
    return reads;
  }

  /** Syncs whose stored keys are being read (`#readSyncKeys`): what each list did not name goes, in one sweep. */
  async #applySyncs(keys: Map<Step, Promise<StoredResourceKey[]>>): Promise<void> {
    const stale: { namespace: string; name: string; group: string; kind: string }[] = [];
    for (const [step, read] of keys) {
      if (step.type !== 'sync') continue;
      // Not named by the list and not changed since: gone from the cluster. An object another
      // replica took after this sync arrived (the agent's stream moved there while this replica
      // was still writing) is newer than the list, not stale.
      for (const k of await read) {
        if (!step.keys.has(keyOf(k.namespace, k.name)) && !step.after.has(k.sk) && k.at <= step.takenAt) {
          stale.push({ namespace: k.namespace, name: k.name, group: step.scope.group, kind: step.scope.kind });
        }
      }
    }
    await this.#sweep(stale);
    for (const step of keys.keys()) if (step.type === 'sync') this.#closeSync(step.after);
  }

  async #apply(step: Step): Promise<void> {
    const { table, log } = this.#o;
    switch (step.type) {
      case 'sync':
        return this.#applySyncs(new Map([[step, scopeKeys(table, this.account, scopePrefix(step.scope))]]));
      case 'unsynced':
        log.warn({ account: this.account, scope: scopeKey(step.scope) }, 'a sync arrived incomplete; the scope will be listed again at the next resume');
        await deleteScopeProgress(table, this.account, step.scope);
        return;
      case 'scopes':
        return this.#applyScopes(step.scopes);
    }
  }

  #closeSync(after: Set<string>): void {
    const i = this.#openSyncs.findIndex((o) => o.after === after);
    if (i >= 0) this.#openSyncs.splice(i, 1);
  }

  async #sweep(items: { group: string; kind: string; namespace: string; name: string }[]): Promise<void> {
    if (items.length === 0) return;
    await writeResources(this.#o.table, this.account, items.map((ref) => ({ op: 'delete', ref })), this.#o.parallel);
    this.stats.swept += items.length;
  }

  /** Deletes what belongs to scopes no longer cached, then records the new set. */
  async #applyScopes(scopes: Scope[]): Promise<void> {
    const { table, clock } = this.#o;
    const stored = await readScopeSet(table, this.account);
    const before = scopesOf(stored?.kinds ?? []);
    const byKind = (list: Scope[]) => {
      const m = new Map<string, { group: string; kind: string; namespaces: Set<string> }>();
      for (const s of list) {
        const k = `${s.group}/${s.kind}`;
        let e = m.get(k);
        if (e === undefined) m.set(k, (e = { group: s.group, kind: s.kind, namespaces: new Set() }));
        e.namespaces.add(s.namespace);
      }
      return m;
    };
    const now = byKind(scopes);
    for (const [k, old] of byKind(before)) {
      const kept = now.get(k);
      if (kept?.namespaces.has('')) continue;
      const items = await scopeKeys(table, this.account, kindPrefix(old.kind, old.group));
      const gone = items.filter((i) => kept === undefined || !kept.namespaces.has(i.namespace));
      await this.#sweep(gone.map((i) => ({ group: old.group, kind: old.kind, namespace: i.namespace, name: i.name })));
    }
    const wanted = new Set(scopes.map(scopeKey));
    for (const p of await scopeProgress(table, this.account)) {
      if (!wanted.has(scopeKey(p.scope))) await deleteScopeProgress(table, this.account, p.scope);
    }
    for (const progress of [this.#progress, this.#progressStored, this.#seen]) for (const key of [...progress.keys()]) if (!wanted.has(key)) progress.delete(key);
    await replaceScopeSet(table, this.account, stored, scopes, clock.now());
  }

  /** Records the progress that is due, every scope's in one BatchWriteItem (a first sync has ten at once). */
  async #writeProgress(seq: number): Promise<void> {
    const { table, clock, progressIntervalMs } = this.#o;
    const now = clock.now();
    const due: [string, ProgressEntry][] = [];
    for (const [key, p] of [...this.#progress]) {
      if (p.seq > seq) continue;
      if (this.#unsynced.has(key)) {
        this.#progress.delete(key);
        continue;
      }
      const force = p.force || this.#forceNext.has(key);
      const last = this.#progressWrittenAt.get(key);
      if (!force && last !== undefined && now - last < progressIntervalMs) continue;
      due.push([key, p]);
    }
    if (due.length === 0) return;
    // A version the table holds already is only seen again: noted in the one seen item, not written
    // again scope by scope (shared/table/resources/scopes.ts).
    const same = (key: string, r: ScopeProgressRecord) => {
      const stored = this.#progressStored.get(key);
      return stored !== undefined && stored.resourceVersion === r.resourceVersion && stored.cluster === r.cluster && stored.objects === r.objects;
    };
    const puts: [string, ProgressEntry][] = [];
    const seen: [string, ProgressEntry][] = [];
    for (const d of due) (d[1].force || this.#forceNext.has(d[0]) || !same(d[0], d[1].record) ? puts : seen).push(d);
    // A version that moved is its own record's to vouch for from now on.
    for (const [key] of puts) this.#seen.delete(key);
    if (seen.length > 0) {
      for (const [key, p] of seen) this.#seen.set(key, p.record);
      const entries = Object.fromEntries([...this.#seen.values()].map((r) => [progressSk(r.scope), { rv: r.resourceVersion, cluster: r.cluster, at: r.at }]));
      if (!(await putScopesSeen(table, this.account, entries))) {
        // Too many scopes for one item: written record by record instead.
        for (const [key] of seen) this.#seen.delete(key);
        puts.push(...seen);
      }
    }
    if (puts.length > 0) await putScopeProgressMany(table, this.account, puts.map(([, p]) => p.record));
    for (const [key, p] of puts) this.#progressStored.set(key, p.record);
    for (const [key, p] of due) {
      this.#progressWrittenAt.set(key, now);
      this.#forceNext.delete(key);
      if (this.#progress.get(key) === p) this.#progress.delete(key);
    }
  }
}

function clusterStatusRecord(c: ClusterStatus__Output, agentId: string, at: number): ClusterStatusRecord {
  // Ages are the agent's word, up to 2^53 - 1: one longer than the time since 1970 would make a time
  // no date holds, and the account served gives these as dates (a view that throws, for every read
  // of the account). Such an age counts as that long.
  const time = (ageMs: number) => at - Math.min(Math.max(0, ageMs), at);
  return {
    reachable: c.reachable,
    since: time(c.sinceAgeMs),
    ...(c.reachable ? {} : { reason: c.reason.slice(0, MAX_STORED_ERROR), error: c.error.slice(0, MAX_STORED_ERROR) }),
    ...(c.lastOutageReason === '' ? {} : { lastOutage: { reason: c.lastOutageReason.slice(0, MAX_STORED_ERROR), from: time(c.lastOutageFromAgeMs), until: time(c.lastOutageUntilAgeMs) } }),
    agentId,
    at,
  };
}

function healthRecord(k: KindHealth__Output, at: number): KindHealthRecord {
  const { lastEventAgeMs, lastErrorAgeMs, lastError, ...counts } = k;
  return {
    ...counts,
    ...(lastEventAgeMs >= 0 ? { lastEventAt: at - lastEventAgeMs } : {}),
    // A kind that works again reports no error but still when it last failed.
    ...(lastError !== '' ? { lastError: lastError.slice(0, MAX_STORED_ERROR) } : {}),
    ...(lastErrorAgeMs >= 0 ? { lastErrorAt: at - lastErrorAgeMs } : {}),
  };
}
