import { type DeleteOptions, type KubeApi, TEST_CONTEXT } from './api.ts';
import type { Lifecycle } from './lifecycle.ts';
import { clone, type JsonObject, type JsonValue, type KubeObject } from './objects.ts';
import { mergePatch } from './patch.ts';
import type { Registry } from './registry.ts';
import { apiVersionOf, type ResourceType, storageVersion } from './resource-types.ts';
import { parseLabelSelector } from './selectors.ts';
import { badRequest } from './status.ts';
import type { Store } from './store.ts';

/**
 * The test's own hands on the cluster state: writes go through the same rules as API requests
 * (validation, defaults, resourceVersion, events to watchers) but act like cluster controllers do,
 * so they may set `status` directly. Errors are the same StatusErrors the API answers with.
 */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** Any Kubernetes object a test writes: `apiVersion`, `kind`, `metadata` and whatever else the kind has. */
export interface ObjectInput {
  apiVersion: string;
  kind: string;
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ListSelector {
  apiVersion: string;
  kind: string;
  namespace?: string;
  labelSelector?: string;
}

export class TestStore {
  readonly #api: KubeApi;
  readonly #registry: Registry;
  readonly #store: Store;
  readonly #lifecycle: Lifecycle;

  constructor(api: KubeApi, registry: Registry, store: Store, lifecycle: Lifecycle) {
    this.#api = api;
    this.#registry = registry;
    this.#store = store;
    this.#lifecycle = lifecycle;
  }

  /** The current (global) resourceVersion. */
  get resourceVersion(): number {
    return this.#store.resourceVersion;
  }

  /** Lists and watches from resourceVersions older than this answer 410 Gone. */
  get compactedResourceVersion(): number {
    return this.#store.compactedResourceVersion;
  }

  #type(apiVersion: string, kind: string): ResourceType {
    const found = this.#registry.byKind(apiVersion, kind);
    if (found === undefined) throw badRequest(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return found.rt;
  }

  /** Creates the object; the namespace must exist (see `ensureNamespace`). */
  create(obj: ObjectInput): KubeObject {
    const o = obj as unknown as KubeObject;
    const rt = this.#type(o.apiVersion, o.kind);
    return this.#api.create(rt, versionOf(rt, o.apiVersion), o.metadata?.namespace ?? '', clone(o) as unknown as JsonValue, TEST_CONTEXT).object;
  }

  /** Replaces the object; a `metadata.resourceVersion` in it must match the stored one. */
  update(obj: ObjectInput): KubeObject {
    const o = obj as unknown as KubeObject;
    const rt = this.#type(o.apiVersion, o.kind);
    return this.#api.update(rt, versionOf(rt, o.apiVersion), o.metadata.namespace ?? '', o.metadata.name ?? '', clone(o) as unknown as JsonValue, TEST_CONTEXT).object;
  }

  /** Creates or replaces the object. */
  upsert(obj: ObjectInput): KubeObject {
    const o = obj as unknown as KubeObject;
    return this.#api.upsert(this.#type(o.apiVersion, o.kind), clone(o)).object;
  }

  /** Applies a JSON merge patch to the stored object. */
  patch(ref: ObjectRef, patch: JsonObject): KubeObject {
    const rt = this.#type(ref.apiVersion, ref.kind);
    const live = this.#api.read(rt, ref.namespace ?? '', ref.name);
    const base = live === undefined ? undefined : (live as unknown as JsonValue);
    if (base === undefined) return this.#api.update(rt, versionOf(rt, ref.apiVersion), ref.namespace ?? '', ref.name, clone(patch), TEST_CONTEXT).object;
    const next = mergePatch(base, patch) as unknown as KubeObject;
    return this.#api.replaceWith(rt, live as KubeObject, next, TEST_CONTEXT).object;
  }

  /**
   * Replaces `current` (an object exactly as this store last returned it) by `next` without reading
   * it back first: the fast path for load generators that update the same objects over and over.
   * A stale `current` fails with 409 Conflict like any update.
   */
  replace(current: KubeObject, next: ObjectInput): KubeObject {
    const rt = this.#type(current.apiVersion, current.kind);
    return this.#api.replaceWith(rt, current, next as unknown as KubeObject, TEST_CONTEXT).object;
  }

  /** Deletes like an API DELETE (finalizers and propagationPolicy honoured); throws 404 when absent. */
  delete(ref: ObjectRef, options: DeleteOptions = {}): void {
    this.#api.delete(this.#type(ref.apiVersion, ref.kind), ref.namespace ?? '', ref.name, options, TEST_CONTEXT);
  }

  get(ref: ObjectRef): KubeObject | undefined {
    return this.#api.read(this.#type(ref.apiVersion, ref.kind), ref.namespace ?? '', ref.name);
  }

  /** Objects of a kind (in one namespace), in key order. */
  list(sel: ListSelector): KubeObject[] {
    return this.listJson(sel).map((json) => JSON.parse(json) as KubeObject);
  }

  /** `list` as the stored JSON, for callers that parse only the objects they use. */
  listJson(sel: ListSelector): string[] {
    const rt = this.#type(sel.apiVersion, sel.kind);
    const labels = parseLabelSelector(sel.labelSelector);
    const page = this.#store.page(rt, {
      namespace: sel.namespace,
      atRv: this.#store.resourceVersion,
      filter: labels.empty ? undefined : (r) => labels.matches(r.labels),
    });
    return page.items.map((r) => r.json as string);
  }

  count(apiVersion: string, kind: string): number {
    return this.#store.count(this.#type(apiVersion, kind));
  }

  /** Live objects per resource (`group/plural`). */
  stats(): Record<string, number> {
    return this.#store.stats();
  }

  /**
   * Forgets history up to `rv` (default: all but the current state): lists at older versions and
   * watches from them answer 410. With `only`, just that kind's history goes (its watch cache window).
   */
  compact(rv?: number, only?: { apiVersion: string; kind: string }): void {
    this.#store.compact(rv, only === undefined ? undefined : this.#type(only.apiVersion, only.kind));
  }

  /** Moves the resourceVersion on by one without changing any object (a write elsewhere in etcd); returns it. */
  advance(): number {
    return this.#store.advance();
  }

  /** The newest compacted resourceVersion of a kind. */
  compactedFor(apiVersion: string, kind: string): number {
    return this.#store.compactedFor(this.#type(apiVersion, kind));
  }

  ensureNamespace(name: string): KubeObject {
    const ref = { apiVersion: 'v1', kind: 'Namespace', name };
    return this.get(ref) ?? this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  /** Resolves when the emulated controllers have nothing left to do. */
  settled(): Promise<void> {
    return this.#lifecycle.settled();
  }
}

function versionOf(rt: ResourceType, apiVersion: string): string {
  const v = rt.versions.find((x) => apiVersionOf(rt.group, x) === apiVersion);
  return v ?? storageVersion(rt);
}
