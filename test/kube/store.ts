import { canonicalJson, type KubeObject } from './objects.ts';
import { type ResourceType, resourceKey } from './resource-types.ts';
import { fieldValue, type Labels } from './selectors.ts';

/**
 * A small multi-version store in the manner of etcd: one global revision counter, every write a new
 * revision of its key, history kept until compacted. It answers reads at the current revision or at
 * any retained older one, keeps keys sorted per resource so paged lists walk a key range (one
 * namespace is one contiguous range), and fans each write out to the watchers of that resource and
 * namespace only, so a write costs nothing per stored object.
 *
 * Objects are kept as their serialized JSON: responses and watch lines are then string joins, and a
 * stored object can never be changed by accident.
 */
export interface Revision {
  readonly rv: number;
  /** The object as served; `null` marks a deletion at `rv`. */
  readonly json: string | null;
  readonly labels: Labels;
  readonly fields: Readonly<Record<string, string>>;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly namespace: string;
  readonly name: string;
  /** The object after the change; for DELETED its last state carrying the deletion's resourceVersion. */
  readonly json: string;
  readonly labels: Labels;
  readonly fields: Readonly<Record<string, string>>;
  /** Labels and fields before a MODIFIED change, so selector watches can turn it into ADDED or DELETED. */
  readonly prevLabels?: Labels;
  readonly prevFields?: Readonly<Record<string, string>>;
}

interface Entry {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  revisions: Revision[];
}

/** Something that wants every event of one resource, in one namespace or in all of them. */
export interface Subscriber {
  readonly namespace: string | null;
  deliver(event: StoreEvent): void;
}

class Bucket {
  rt: ResourceType;
  readonly entries = new Map<string, Entry>();
  keys: string[] = [];
  pendingKeys: string[] = [];
  live = 0;
  events: StoreEvent[] = [];
  eventsHead = 0;
  /** Version of this resource's newest event, kept through compaction. */
  lastEventRv = 0;
  /** History of this resource alone compacted up to here (a test knob; etcd compacts globally). */
  compactedRv = 0;
  readonly allNamespaces = new Set<Subscriber>();
  readonly byNamespace = new Map<string, Set<Subscriber>>();

  constructor(rt: ResourceType) {
    this.rt = rt;
  }

  sortedKeys(): string[] {
    if (this.pendingKeys.length > 0) {
      if (this.pendingKeys.length < 64) {
        for (const k of this.pendingKeys) this.keys.splice(lowerBound(this.keys, k), 0, k);
      } else {
        this.keys = this.keys.concat(this.pendingKeys);
        this.keys.sort();
      }
      this.pendingKeys = [];
    }
    return this.keys;
  }
}

function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function objectKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

function revisionAt(entry: Entry, rv: number): Revision | undefined {
  const revs = entry.revisions;
  for (let i = revs.length - 1; i >= 0; i--) {
    const r = revs[i] as Revision;
    if (r.rv <= rv) return r.json === null ? undefined : r;
  }
  return undefined;
}

function latest(entry: Entry): Revision | undefined {
  const r = entry.revisions.at(-1);
  return r === undefined || r.json === null ? undefined : r;
}

export interface PageQuery {
  namespace?: string;
  /** Read the state as of this revision. */
  atRv: number;
  /** First key to consider (inclusive). */
  startKey?: string;
  limit?: number;
  filter?: (rev: Revision) => boolean;
}

export interface Page {
  items: Revision[];
  /** Key of the last item returned when more matching items follow. */
  lastKey?: string;
}

export interface StoreOptions {
  /** Revisions kept before the oldest are compacted away automatically; `Infinity` keeps all. */
  maxRevisions: number;
}

export class Store {
  #rv = 0;
  #compactedRv = 0;
  readonly #buckets = new Map<string, Bucket>();
  readonly #maxRevisions: number;
  #rvWaiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(options: StoreOptions) {
    this.#maxRevisions = options.maxRevisions;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  /** Reads at or below this revision are gone: lists and watches from older versions get 410. */
  get compactedResourceVersion(): number {
    return this.#compactedRv;
  }

  /** The newest compacted revision for one resource: the global one, or later if compacted alone. */
  compactedFor(rt: ResourceType): number {
    return Math.max(this.#compactedRv, this.#buckets.get(resourceKey(rt))?.compactedRv ?? 0);
  }

  #bucket(rt: ResourceType): Bucket {
    const key = resourceKey(rt);
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = new Bucket(rt);
      this.#buckets.set(key, b);
    } else b.rt = rt;
    return b;
  }

  get(rt: ResourceType, namespace: string, name: string, atRv?: number): Revision | undefined {
    const entry = this.#buckets.get(resourceKey(rt))?.entries.get(objectKey(namespace, name));
    if (entry === undefined) return undefined;
    return atRv === undefined ? latest(entry) : revisionAt(entry, atRv);
  }

  count(rt: ResourceType): number {
    return this.#buckets.get(resourceKey(rt))?.live ?? 0;
  }

  /** Stores `obj` as a new revision, stamping its resourceVersion; returns the event it produced. */
  put(rt: ResourceType, obj: KubeObject): StoreEvent {
    const bucket = this.#bucket(rt);
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    const key = objectKey(namespace, name);
    const rv = this.#rv + 1;
    obj.metadata.resourceVersion = String(rv);
    const rev: Revision = {
      rv,
      json: canonicalJson(obj),
      labels: obj.metadata.labels ?? {},
      fields: selectableFields(rt, obj),
    };
    let entry = bucket.entries.get(key);
    if (entry === undefined) {
      entry = { key, namespace, name, revisions: [] };
      bucket.entries.set(key, entry);
      bucket.pendingKeys.push(key);
    }
    const prev = latest(entry);
    if (prev === undefined) bucket.live++;
    entry.revisions.push(rev);
    const event: StoreEvent =
      prev === undefined
        ? { rv, type: 'ADDED', namespace, name, json: rev.json as string, labels: rev.labels, fields: rev.fields }
        : {
            rv, type: 'MODIFIED', namespace, name, json: rev.json as string, labels: rev.labels, fields: rev.fields,
            prevLabels: prev.labels, prevFields: prev.fields,
          };
    return this.#record(bucket, event);
  }

  /** Deletes the object; `last` is its final state, sent to watchers with the deletion's resourceVersion. */
  remove(rt: ResourceType, last: KubeObject): StoreEvent | undefined {
    const bucket = this.#bucket(rt);
    const namespace = last.metadata.namespace ?? '';
    const name = last.metadata.name ?? '';
    const entry = bucket.entries.get(objectKey(namespace, name));
    const prev = entry === undefined ? undefined : latest(entry);
    if (entry === undefined || prev === undefined) return undefined;
    const rv = this.#rv + 1;
    const copy: KubeObject = { ...last, metadata: { ...last.metadata, resourceVersion: String(rv) } };
    entry.revisions.push({ rv, json: null, labels: prev.labels, fields: prev.fields });
    bucket.live--;
    return this.#record(bucket, {
      rv, type: 'DELETED', namespace, name, json: canonicalJson(copy), labels: prev.labels, fields: prev.fields,
    });
  }

  #record(bucket: Bucket, event: StoreEvent): StoreEvent {
    this.#rv = event.rv;
    bucket.lastEventRv = event.rv;
    bucket.events.push(event);
    for (const s of bucket.allNamespaces) s.deliver(event);
    const nsSubs = bucket.byNamespace.get(event.namespace);
    if (nsSubs !== undefined) for (const s of nsSubs) s.deliver(event);
    if (this.#rvWaiters.length > 0) this.#wakeWaiters();
    const slack = Math.max(1000, Math.floor(this.#maxRevisions / 10));
    if (this.#rv - this.#compactedRv > this.#maxRevisions + slack) this.compact(this.#rv - this.#maxRevisions);
    return event;
  }

  /** One page of the objects of a resource as of `atRv`, in key order. */
  page(rt: ResourceType, q: PageQuery): Page {
    const bucket = this.#buckets.get(resourceKey(rt));
    if (bucket === undefined) return { items: [] };
    const keys = bucket.sortedKeys();
    const prefix = q.namespace === undefined || q.namespace === '' || !rt.namespaced ? '' : `${q.namespace}/`;
    const start = q.startKey !== undefined && q.startKey > prefix ? q.startKey : prefix;
    const limit = q.limit ?? Infinity;
    const items: Revision[] = [];
    let lastKey: string | undefined;
    for (let i = lowerBound(keys, start); i < keys.length; i++) {
      const key = keys[i] as string;
      if (prefix !== '' && !key.startsWith(prefix)) break;
      const entry = bucket.entries.get(key);
      const rev = entry === undefined ? undefined : revisionAt(entry, q.atRv);
      if (rev === undefined || (q.filter !== undefined && !q.filter(rev))) continue;
      if (items.length === limit) return { items, lastKey };
      items.push(rev);
      lastKey = key;
    }
    return { items };
  }

  /** Number of objects of a resource (in one namespace) at `atRv` from `startKey` on. */
  countFrom(rt: ResourceType, namespace: string | undefined, atRv: number, startKey = ''): number {
    let n = 0;
    let key: string | undefined = startKey;
    for (;;) {
      const page = this.page(rt, { namespace, atRv, startKey: key, limit: 5000 });
      n += page.items.length;
      if (page.lastKey === undefined) return n;
      key = `${page.lastKey}\u0000`;
    }
  }

  /** The version of the newest change to a resource: where a watch cache of that resource alone stands. */
  lastEventRv(rt: ResourceType): number {
    return this.#buckets.get(resourceKey(rt))?.lastEventRv ?? 0;
  }

  /** Retained events of a resource after `rv`, oldest first; `undefined` when `rv` is compacted. */
  eventsAfter(rt: ResourceType, rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedFor(rt)) return undefined;
    const bucket = this.#buckets.get(resourceKey(rt));
    if (bucket === undefined) return [];
    const events = bucket.events;
    let lo = bucket.eventsHead;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((events[mid] as StoreEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return events.slice(lo);
  }

  subscribe(rt: ResourceType, sub: Subscriber): () => void {
    const bucket = this.#bucket(rt);
    let set: Set<Subscriber>;
    if (sub.namespace === null || !rt.namespaced) set = bucket.allNamespaces;
    else {
      set = bucket.byNamespace.get(sub.namespace) ?? new Set();
      bucket.byNamespace.set(sub.namespace, set);
    }
    set.add(sub);
    return () => {
      set.delete(sub);
    };
  }

  subscriberCount(): number {
    let n = 0;
    for (const b of this.#buckets.values()) {
      n += b.allNamespaces.size;
      for (const s of b.byNamespace.values()) n += s.size;
    }
    return n;
  }

  /**
   * Forgets history at and below `toRv` (default: everything before the current revision), for every
   * resource or only for `only` (as a watch cache window of one busy resource would).
   */
  compact(toRv = this.#rv, only?: ResourceType): void {
    const target = Math.min(toRv, this.#rv);
    if (only !== undefined) {
      const bucket = this.#bucket(only);
      if (target <= Math.max(bucket.compactedRv, this.#compactedRv)) return;
      bucket.compactedRv = target;
      compactBucket(bucket, target);
      return;
    }
    if (target <= this.#compactedRv) return;
    this.#compactedRv = target;
    for (const bucket of this.#buckets.values()) compactBucket(bucket, target);
  }

  /**
   * A revision that changes no object of any served kind, as a write to another etcd key (a lease,
   * the API server's compaction key) does: versions handed out so far are then all in the past.
   */
  advance(): number {
    this.#rv++;
    if (this.#rvWaiters.length > 0) this.#wakeWaiters();
    return this.#rv;
  }

  /** Resolves true once the store reaches `rv`, false after `ms`. */
  waitForRv(rv: number, ms: number): Promise<boolean> {
    return this.waitUntil(() => this.#rv >= rv, ms);
  }

  /** Resolves true once `check` holds after a write (or at once), false after `ms`. */
  waitUntil(check: () => boolean, ms: number): Promise<boolean> {
    if (check()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { check, resolve: () => resolve(true) };
      this.#rvWaiters.push(waiter);
      setTimeout(() => {
        this.#rvWaiters = this.#rvWaiters.filter((w) => w !== waiter);
        resolve(check());
      }, ms).unref();
    });
  }

  #wakeWaiters(): void {
    const due = this.#rvWaiters.filter((w) => w.check());
    if (due.length === 0) return;
    this.#rvWaiters = this.#rvWaiters.filter((w) => !due.includes(w));
    for (const w of due) w.resolve();
  }

  /** Counts of live objects per resource key, for the admin endpoint and benchmarks. */
  stats(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, b] of this.#buckets) if (b.live > 0) out[key] = b.live;
    return out;
  }
}

function compactBucket(bucket: Bucket, target: number): void {
  const removed = new Set<string>();
  let head = bucket.eventsHead;
  const events = bucket.events;
  while (head < events.length && (events[head] as StoreEvent).rv <= target) {
    const ev = events[head] as StoreEvent;
    head++;
    const key = objectKey(ev.namespace, ev.name);
    const entry = bucket.entries.get(key);
    if (entry === undefined) continue;
    // Keep the newest revision at or below the target (the state there) and everything after it.
    let keepFrom = 0;
    for (let i = entry.revisions.length - 1; i >= 0; i--) {
      if ((entry.revisions[i] as Revision).rv <= target) {
        keepFrom = i;
        break;
      }
    }
    if (keepFrom > 0) entry.revisions = entry.revisions.slice(keepFrom);
    const first = entry.revisions[0];
    if (entry.revisions.length === 1 && first !== undefined && first.json === null) {
      bucket.entries.delete(key);
      removed.add(key);
    }
  }
  bucket.eventsHead = head;
  if (head > 1024 && head > events.length / 2) {
    bucket.events = events.slice(head);
    bucket.eventsHead = 0;
  }
  if (removed.size > 0) {
    bucket.keys = bucket.keys.filter((k) => !removed.has(k));
    bucket.pendingKeys = bucket.pendingKeys.filter((k) => !removed.has(k));
  }
}

function selectableFields(rt: ResourceType, obj: KubeObject): Record<string, string> {
  const fields: Record<string, string> = {
    'metadata.name': obj.metadata.name ?? '',
    'metadata.namespace': obj.metadata.namespace ?? '',
  };
  for (const f of rt.selectableFields) fields[f] = fieldValue(obj, f);
  return fields;
}
