import { parse as parseYaml } from 'yaml';
import type { Clock } from '../../shared/clock.ts';
import { applyCreateDefaults, ClusterIpAllocator, initialStatus } from './defaults.ts';
import { listResponse, type ListQuery, parseResourceVersion } from './list.ts';
import type { WatchCache } from './watch-cache.ts';
import { apply, conflictingManager, conflictMessage, type FieldSetOptions, recordUpdate } from './managed-fields.ts';
import {
  clone, deepEqual, generateNameSuffix, isJsonObject, type JsonObject, type JsonValue, type KubeObject, newUid, timestamp,
} from './objects.ts';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.ts';
import { apiVersionOf, type ResourceType, servedAs, storageVersion } from './resource-types.ts';
import {
  alreadyExists, badRequest, conflict, failure, forbidden, invalid,
  MODIFIED_CONFLICT, notFound, type QualifiedResource, StatusError, success, type SuccessStatus, tooLargeResourceVersion,
  unsupportedMediaType,
} from './status.ts';
import { objectKey, type Store, type StoreEvent } from './store.ts';
import { missingName, validateObject } from './validation.ts';

/**
 * The Kubernetes API semantics over the store: reads and paged lists with resourceVersion rules,
 * create/update/patch/apply/delete with their preconditions, defaults, status subresource rules,
 * generation and managedFields. The HTTP layer and the programmatic test store both call this, so a
 * test seeding data and a client writing over HTTP go through the same rules.
 */
export interface WriteContext {
  /** Field manager recorded in managedFields for non-apply writes. */
  manager: string;
  /**
   * Writes made by the test itself, standing in for cluster controllers: they may set status on
   * create and update, and leave managedFields as given.
   */
  privileged: boolean;
  dryRun: boolean;
}

export const TEST_CONTEXT: WriteContext = { manager: 'test', privileged: true, dryRun: false };

export interface WriteResult {
  object: KubeObject;
  /** The object exactly as stored and served. */
  json: string;
  created: boolean;
}


export type { ListQuery };

export interface DeleteOptions {
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface DeleteResult {
  code: number;
  body: KubeObject | SuccessStatus;
}

/** What runs after a write commits: garbage collection, namespace and CRD lifecycles. */
export interface WriteObserver {
  committed(rt: ResourceType, event: StoreEvent, object: KubeObject): void;
}

export const APPLY_PATCH = 'application/apply-patch+yaml';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';

export interface ApiOptions {
  store: Store;
  clock: Clock;
  /** How long a read for a resourceVersion newer than the store waits before answering 504. */
  tooLargeResourceVersionWaitMs: number;
  /** Looks up the resource type of a namespace-scoped check; supplied by the server. */
  namespaces: ResourceType;
  /** Serves reads at "0" and "not older than" a version, as the watch cache does. */
  cache: WatchCache;
}

export function qualified(rt: ResourceType): QualifiedResource {
  return { group: rt.group, resource: rt.plural };
}



export class KubeApi {
  readonly store: Store;
  readonly #clock: Clock;
  readonly #waitMs: number;
  readonly #namespaces: ResourceType;
  readonly #cache: WatchCache;
  readonly #ips = new ClusterIpAllocator();
  readonly #observers: WriteObserver[] = [];

  constructor(options: ApiOptions) {
    this.store = options.store;
    this.#clock = options.clock;
    this.#waitMs = options.tooLargeResourceVersionWaitMs;
    this.#namespaces = options.namespaces;
    this.#cache = options.cache;
  }

  observe(observer: WriteObserver): void {
    this.#observers.push(observer);
  }

  now(): string {
    return timestamp(this.#clock.now());
  }

  /** The stored object, parsed; `undefined` when absent. */
  read(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const rev = this.store.get(rt, rt.namespaced ? namespace : '', name);
    return rev?.json == null ? undefined : (JSON.parse(rev.json) as KubeObject);
  }

  /** GET of one object, answering `json` as served at `version`. */
  async get(rt: ResourceType, version: string, namespace: string, name: string, resourceVersion?: string): Promise<string> {
    if (resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== '0') {
      await this.#waitNotOlderThan(rt, parseResourceVersion(resourceVersion));
    }
    const rev = this.store.get(rt, rt.namespaced ? namespace : '', name);
    if (rev?.json == null) throw notFound(qualified(rt), name);
    return servedAs(rt, version, rev.json);
  }

  /** Reads not older than a version are served by the watch cache, which waits a while for it. */
  async #waitNotOlderThan(rt: ResourceType, rv: number): Promise<void> {
    if (!(await this.#cache.reached(rt, rv, this.#waitMs))) throw tooLargeResourceVersion(rv, this.#cache.rv(rt));
  }

  /** A LIST response body, following the resourceVersion, resourceVersionMatch, limit and continue rules. */
  list(rt: ResourceType, version: string, namespace: string | undefined, q: ListQuery): Promise<string> {
    return listResponse(this.store, rt, version, namespace, q, {
      rv: () => this.#cache.rv(rt),
      waitNotOlderThan: (rv) => this.#waitNotOlderThan(rt, rv),
    });
  }

  // ---- writes ----

  #fieldOptions(rt: ResourceType, subresource?: string): FieldSetOptions {
    const skip = rt.statusSubresource ? (subresource === 'status' ? [] : ['status']) : [];
    return { keyedLists: rt.strategicMerge, skip };
  }

  /** Checks a request body's kind and apiVersion against the URL and fills them in when absent. */
  #incoming(rt: ResourceType, version: string, namespace: string, body: JsonValue): KubeObject {
    if (!isJsonObject(body)) throw badRequest('the body of the request must be a JSON or YAML object');
    // Callers hand over bodies they no longer use (parsed requests, patch results, the test store's copies).
    const obj = { ...body, metadata: isJsonObject(body.metadata) ? { ...body.metadata } : {} } as unknown as KubeObject;
    const expectedVersion = apiVersionOf(rt.group, version);
    if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = expectedVersion;
    if (obj.kind === undefined || obj.kind === '') obj.kind = rt.kind;
    if (obj.kind !== rt.kind || (obj.apiVersion !== expectedVersion && !rt.versions.some((v) => apiVersionOf(rt.group, v) === obj.apiVersion))) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expectedVersion})`);
    }
    if (rt.namespaced) {
      const given = obj.metadata.namespace;
      if (given !== undefined && given !== '' && given !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = namespace;
    } else delete obj.metadata.namespace;
    // Stored in the storage version; served in whichever version is asked for.
    obj.apiVersion = apiVersionOf(rt.group, storageVersion(rt));
    return obj;
  }

  #checkNamespace(rt: ResourceType, obj: KubeObject): void {
    if (!rt.namespaced) return;
    const ns = this.store.get(this.#namespaces, '', obj.metadata.namespace ?? '');
    if (ns?.json == null) throw notFound(qualified(this.#namespaces), obj.metadata.namespace ?? '');
    if (ns.json.includes('"deletionTimestamp"')) {
      const message = `unable to create new content in namespace ${obj.metadata.namespace ?? ''} because it is being terminated`;
      throw forbidden(`${qualified(rt).resource} "${obj.metadata.name ?? ''}" is forbidden: ${message}`, {
        name: obj.metadata.name ?? '', kind: rt.plural,
        causes: [{ reason: 'NamespaceTerminating', message, field: 'metadata.namespace' }],
      });
    }
  }

  create(rt: ResourceType, version: string, namespace: string, body: JsonValue, ctx: WriteContext): WriteResult {
    const obj = this.#incoming(rt, version, namespace, body);
    if ((obj.metadata.name ?? '') === '') {
      if ((obj.metadata.generateName ?? '') === '') missingName(rt);
      obj.metadata.name = `${obj.metadata.generateName ?? ''}${generateNameSuffix()}`;
    }
    return this.#createPrepared(rt, obj, ctx, false);
  }

  #createPrepared(rt: ResourceType, obj: KubeObject, ctx: WriteContext, managedDone: boolean): WriteResult {
    const name = obj.metadata.name ?? '';
    this.#checkNamespace(rt, obj);
    if (this.store.get(rt, obj.metadata.namespace ?? '', name) !== undefined) throw alreadyExists(qualified(rt), name);
    const meta = obj.metadata;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    meta.uid = newUid();
    meta.creationTimestamp = this.now();
    if (rt.generation) meta.generation = 1;
    else delete meta.generation;
    applyCreateDefaults(rt, obj, this.#ips);
    if (rt.statusSubresource && !ctx.privileged) {
      const status = initialStatus(rt);
      if (status === undefined) delete obj.status;
      else obj.status = status;
    }
    validateObject(rt, obj);
    if (!ctx.privileged && !managedDone) {
      recordUpdate({ old: undefined, next: obj, manager: ctx.manager, apiVersion: obj.apiVersion, now: this.now(), opts: this.#fieldOptions(rt) });
    }
    return this.#commit(rt, obj, ctx, true);
  }

  #commit(rt: ResourceType, obj: KubeObject, ctx: WriteContext, created: boolean): WriteResult {
    if (ctx.dryRun) {
      const json = JSON.stringify(obj);
      return { object: obj, json, created };
    }
    const event = this.store.put(rt, obj);
    for (const o of this.#observers) o.committed(rt, event, obj);
    return { object: obj, json: event.json, created };
  }

  #live(rt: ResourceType, namespace: string, name: string): KubeObject {
    const live = this.read(rt, namespace, name);
    if (live === undefined) throw notFound(qualified(rt), name);
    return live;
  }

  /** PUT: replaces the object (or only its status through the status subresource). */
  update(rt: ResourceType, version: string, namespace: string, name: string, body: JsonValue, ctx: WriteContext, subresource?: 'status'): WriteResult {
    const incoming = this.#incoming(rt, version, namespace, body);
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
    }
    incoming.metadata.name = name;
    const old = this.#live(rt, namespace, name);
    return this.#replace(rt, old, incoming, ctx, subresource, false);
  }

  #replace(rt: ResourceType, old: KubeObject, incoming: KubeObject, ctx: WriteContext, subresource: string | undefined, managedDone: boolean): WriteResult {
    const name = old.metadata.name ?? '';
    const wantRv = incoming.metadata.resourceVersion;
    if (wantRv !== undefined && wantRv !== '' && wantRv !== old.metadata.resourceVersion) {
      throw conflict(qualified(rt), name, MODIFIED_CONFLICT);
    }
    let next: KubeObject;
    if (subresource === 'status') {
      next = clone(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = incoming.status;
      if (managedDone) next.metadata.managedFields = incoming.metadata.managedFields;
    } else {
      next = incoming;
      if (rt.statusSubresource && !ctx.privileged) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    const meta = next.metadata;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    meta.namespace = old.metadata.namespace;
    if (rt.namespaced === false) delete meta.namespace;
    if (old.metadata.deletionTimestamp !== undefined) meta.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (rt.generation) {
      meta.generation = old.metadata.generation ?? 1;
      if (!deepEqual(specOf(old), specOf(next))) meta.generation += 1;
    } else delete meta.generation;
    meta.resourceVersion = old.metadata.resourceVersion;
    if (next.metadata.managedFields === undefined && old.metadata.managedFields !== undefined && (ctx.privileged || managedDone)) {
      meta.managedFields = old.metadata.managedFields;
    }
    validateObject(rt, next, old);
    if (!ctx.privileged && !managedDone) {
      const input = { old, next, manager: ctx.manager, apiVersion: next.apiVersion, now: this.now(), opts: this.#fieldOptions(rt, subresource) };
      recordUpdate(subresource === undefined ? input : { ...input, subresource });
    }
    if (unchanged(old, next)) return { object: old, json: JSON.stringify(old), created: false };
    if (meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).length === 0 && !this.#namespaceHolds(rt, next)) {
      return this.#finalize(rt, next, ctx);
    }
    return this.#commit(rt, next, ctx, false);
  }

  /** A terminating namespace stays until its `spec.finalizers` are emptied by the namespace lifecycle. */
  #namespaceHolds(rt: ResourceType, obj: KubeObject): boolean {
    const spec = obj.spec;
    return rt === this.#namespaces && isJsonObject(spec) && Array.isArray(spec.finalizers) && spec.finalizers.length > 0;
  }

  /** Removes an object whose deletion was waiting on finalizers that are now gone. */
  #finalize(rt: ResourceType, obj: KubeObject, ctx: WriteContext): WriteResult {
    if (ctx.dryRun) return { object: obj, json: JSON.stringify(obj), created: false };
    const event = this.store.remove(rt, obj);
    if (event !== undefined) for (const o of this.#observers) o.committed(rt, event, obj);
    return { object: obj, json: event?.json ?? JSON.stringify(obj), created: false };
  }

  /** PATCH in any of the four patch types; apply may create the object. */
  patch(
    rt: ResourceType, version: string, namespace: string, name: string, contentType: string, bodyText: string,
    ctx: WriteContext & { force: boolean; fieldManagerGiven: boolean }, subresource?: 'status',
  ): WriteResult {
    if (contentType === APPLY_PATCH) return this.#apply(rt, version, namespace, name, bodyText, ctx, subresource);
    if (contentType === STRATEGIC_PATCH && !rt.strategicMerge) {
      throw unsupportedMediaType(contentType, [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]);
    }
    const patchBody = parseJsonBody(bodyText);
    const old = this.#live(rt, namespace, name);
    const current = servedObject(rt, version, old);
    let patched: JsonValue;
    if (contentType === MERGE_PATCH) patched = mergePatch(current, patchBody);
    else if (contentType === STRATEGIC_PATCH) patched = strategicMergePatch(current, patchBody);
    else if (contentType === JSON_PATCH) patched = jsonPatch(current, patchBody);
    else throw unsupportedMediaType(contentType, [JSON_PATCH, MERGE_PATCH, APPLY_PATCH, ...(rt.strategicMerge ? [STRATEGIC_PATCH] : [])]);
    const incoming = this.#incoming(rt, version, namespace, patched);
    if (incoming.metadata.name !== name) throw badRequest(`the name of the object (${incoming.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    if (incoming.metadata.uid !== old.metadata.uid) {
      throw conflict(qualified(rt), name, `Precondition failed: UID in precondition: ${String(incoming.metadata.uid)}, UID in object meta: ${old.metadata.uid ?? ''}`);
    }
    return this.#replace(rt, old, incoming, ctx, subresource, false);
  }

  #apply(rt: ResourceType, version: string, namespace: string, name: string, bodyText: string, ctx: WriteContext & { force: boolean; fieldManagerGiven: boolean }, subresource?: 'status'): WriteResult {
    if (!ctx.fieldManagerGiven) {
      throw invalid('meta.k8s.io', 'PatchOptions', '', [{ type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' }]);
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(bodyText);
    } catch (e) {
      throw badRequest(`error decoding YAML: ${(e as Error).message}`);
    }
    if (!isJsonObject(parsed)) throw badRequest('the body of an apply patch must be a YAML or JSON object');
    if (typeof parsed.apiVersion !== 'string' || typeof parsed.kind !== 'string') {
      throw badRequest('apiVersion and kind must be set in an apply patch');
    }
    const applied = this.#incoming(rt, version, namespace, parsed);
    if (applied.metadata.name !== undefined && applied.metadata.name !== name) {
      throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`);
    }
    applied.metadata.name = name;
    const live = this.read(rt, namespace, name);
    const wantRv = applied.metadata.resourceVersion;
    if (live !== undefined && wantRv !== undefined && wantRv !== '' && wantRv !== live.metadata.resourceVersion) {
      throw conflict(qualified(rt), name, MODIFIED_CONFLICT);
    }
    const result = apply({
      live, applied, manager: ctx.manager, apiVersion: apiVersionOf(rt.group, version), force: ctx.force, now: this.now(),
      opts: this.#fieldOptions(rt, subresource),
    });
    if (!result.ok) {
      const message = conflictMessage(result.conflicts);
      throw new StatusError(failure(409, 'Conflict', message, {
        causes: result.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${conflictingManager(c)}`, field: c.path })),
      }));
    }
    const merged = result.object;
    merged.apiVersion = applied.apiVersion;
    merged.kind = applied.kind;
    if (live === undefined) {
      if (subresource === 'status') throw notFound(qualified(rt), name);
      return this.#createPrepared(rt, merged, ctx, true);
    }
    return this.#replace(rt, live, merged, ctx, subresource, true);
  }

  /** DELETE of one object, honouring preconditions, finalizers and propagationPolicy. */
  delete(rt: ResourceType, namespace: string, name: string, opts: DeleteOptions, ctx: WriteContext): DeleteResult {
    const live = this.#live(rt, namespace, name);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== live.metadata.uid) {
      throw conflict(qualified(rt), name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${live.metadata.uid ?? ''}`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== live.metadata.resourceVersion) {
      throw conflict(qualified(rt), name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${live.metadata.resourceVersion ?? ''}`);
    }
    const policy = opts.propagationPolicy;
    if (policy !== undefined && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw invalid('meta.k8s.io', 'DeleteOptions', '', [{ type: 'FieldValueNotSupported', field: 'propagationPolicy', detail: `"${policy}": supported values: "Foreground", "Background", "Orphan"` }]);
    }
    const wctx = { ...ctx, dryRun: ctx.dryRun || opts.dryRun === true };
    const finalizers = [...(live.metadata.finalizers ?? [])];
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    const isNamespace = rt === this.#namespaces;
    if (finalizers.length > 0 || isNamespace) {
      if (live.metadata.deletionTimestamp !== undefined && deepEqual(finalizers, live.metadata.finalizers ?? [])) {
        return { code: 200, body: live };
      }
      const next = clone(live);
      next.metadata.deletionTimestamp = this.now();
      if (rt.gracefulDeletion === true) next.metadata.deletionGracePeriodSeconds = 0;
      if (finalizers.length > 0) next.metadata.finalizers = finalizers;
      if (isNamespace) next.status = { phase: 'Terminating' };
      const result = this.#commit(rt, next, wctx, false);
      return { code: 200, body: result.object };
    }
    if (rt.gracefulDeletion === true) {
      // No kubelet runs here, so every pod is deleted as one never scheduled is: marked with a zero
      // grace period (what DELETE answers and watchers see as MODIFIED), then removed.
      const marked = clone(live);
      marked.metadata.deletionTimestamp = this.now();
      marked.metadata.deletionGracePeriodSeconds = 0;
      const result = this.#commit(rt, marked, wctx, false);
      this.#finalize(rt, result.object, wctx);
      return { code: 200, body: result.object };
    }
    const result = this.#finalize(rt, live, wctx);
    const body: KubeObject | SuccessStatus = rt.returnDeletedObject
      ? (JSON.parse(result.json) as KubeObject)
      : success(rt.group === ''
        ? { name, kind: rt.plural, uid: live.metadata.uid ?? '' }
        : { name, group: rt.group, kind: rt.plural, uid: live.metadata.uid ?? '' });
    return { code: 200, body };
  }

  /** DELETE on a collection: deletes every matching object and answers the list of them. */
  async deleteCollection(rt: ResourceType, version: string, namespace: string | undefined, q: ListQuery, opts: DeleteOptions, ctx: WriteContext): Promise<string> {
    const listed = JSON.parse(await this.list(rt, version, namespace, { ...q, limit: undefined, continue: undefined })) as { items: KubeObject[] };
    const deleted: string[] = [];
    for (const item of listed.items) {
      const r = this.delete(rt, item.metadata.namespace ?? '', item.metadata.name ?? '', opts, ctx);
      deleted.push(JSON.stringify('kind' in r.body && r.body.kind !== 'Status' ? r.body : item));
    }
    return `{"kind":"${rt.listKind}","apiVersion":"${apiVersionOf(rt.group, version)}","metadata":{"resourceVersion":"${this.store.resourceVersion}"},"items":[${deleted.join(',')}]}`;
  }

  /** Replaces `old` by `next` under the update rules (resourceVersion precondition, status, generation). */
  replaceWith(rt: ResourceType, old: KubeObject, next: KubeObject, ctx: WriteContext, subresource?: string): WriteResult {
    return this.#replace(rt, old, next, ctx, subresource, false);
  }

  /** Writes a whole object as a test or controller would: create when absent, replace when present. */
  upsert(rt: ResourceType, obj: KubeObject, ctx: WriteContext = TEST_CONTEXT): WriteResult {
    const ns = obj.metadata.namespace ?? '';
    const version = apiVersionFromBody(rt, obj.apiVersion);
    const old = obj.metadata.name === undefined ? undefined : this.read(rt, ns, obj.metadata.name);
    if (old === undefined) return this.create(rt, version, ns, obj as unknown as JsonValue, ctx);
    const incoming = this.#incoming(rt, version, ns, obj as unknown as JsonValue);
    return this.#replace(rt, old, incoming, ctx, undefined, false);
  }

  /** The object key of a resource, used by lifecycle bookkeeping. */
  key(rt: ResourceType, obj: KubeObject): string {
    return objectKey(rt.namespaced ? (obj.metadata.namespace ?? '') : '', obj.metadata.name ?? '');
  }
}

function apiVersionFromBody(rt: ResourceType, apiVersion: string | undefined): string {
  const v = apiVersion?.split('/').at(-1);
  return v !== undefined && rt.versions.includes(v) ? v : storageVersion(rt);
}

function specOf(obj: KubeObject): JsonObject {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest as JsonObject;
}

function withoutVolatile(obj: KubeObject): JsonObject {
  const meta = { ...obj.metadata };
  delete meta.resourceVersion;
  const managed = Array.isArray(meta.managedFields) ? meta.managedFields.map((e) => ({ ...e, time: '' })) : undefined;
  if (managed === undefined) delete meta.managedFields;
  else meta.managedFields = managed;
  return { ...(obj as unknown as JsonObject), metadata: meta as JsonObject };
}

/** A write that changes nothing is not stored and produces no event, as on a real server. */
function unchanged(old: KubeObject, next: KubeObject): boolean {
  return deepEqual(withoutVolatile(old), withoutVolatile(next));
}

export function parseJsonBody(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (e) {
    throw badRequest(`error decoding patch: ${(e as Error).message}`);
  }
}


function servedObject(rt: ResourceType, version: string, obj: KubeObject): JsonValue {
  const copy = clone(obj) as unknown as JsonObject;
  copy.apiVersion = apiVersionOf(rt.group, version);
  return copy;
}


