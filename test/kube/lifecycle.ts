import { type KubeApi, TEST_CONTEXT, type WriteObserver } from './api.ts';
import { reconcileDeployment } from './deployment-controller.ts';
import { clone, isJsonObject, type KubeObject } from './objects.ts';
import { resourceTypeFromCrd, type Registry } from './registry.ts';
import { CRD_RESOURCE_KEY, DEPLOYMENT_RESOURCE_KEY, NAMESPACE_RESOURCE_KEY, type ResourceType, resourceKey, storageVersion } from './resource-types.ts';
import { isStatusError } from './status.ts';
import type { StoreEvent } from './store.ts';

/**
 * The controllers a real cluster runs that clients of the API notice: the garbage collector
 * (ownerReferences with Background, Foreground and Orphan propagation), the namespace lifecycle
 * (a deleted namespace turns Terminating, its content is deleted, then it goes), and the CRD
 * controllers (names accepted, Established, instances removed when the definition is deleted), and
 * when asked for, a stand-in deployment controller (deployment-controller.ts).
 * They run after the write that triggers them has answered, as on a real cluster; `settled()`
 * resolves when they have nothing left to do.
 */
const CRD_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

interface ObjectRef {
  resource: string;
  namespace: string;
  name: string;
}

export class Lifecycle implements WriteObserver {
  readonly #api: KubeApi;
  readonly #registry: Registry;
  readonly #types = new Map<string, ResourceType>();
  /** owner uid -> dependents, keyed by `resource|namespace|name`. */
  readonly #dependents = new Map<string, Set<string>>();
  readonly #ownersOf = new Map<string, string[]>();
  readonly #liveUids = new Set<string>();
  /** Namespaces being emptied, with the namespace resource type. */
  readonly #terminating = new Map<string, ResourceType>();
  /** CRDs whose instances are being removed, by CRD name. */
  readonly #removingCrds = new Map<string, { crdType: ResourceType; crd: KubeObject; rt: ResourceType }>();
  #queue: (() => void)[] = [];
  #scheduled = false;
  #idle: (() => void)[] = [];

  readonly #deploymentController: boolean;
  readonly #unserved: (rt: ResourceType) => void;

  /** `unserved` hears of a custom resource that is no longer served, to end the watches on it. */
  constructor(api: KubeApi, registry: Registry, options: { deploymentController: boolean; unserved?: (rt: ResourceType) => void }) {
    this.#api = api;
    this.#registry = registry;
    this.#deploymentController = options.deploymentController;
    this.#unserved = options.unserved ?? (() => {});
  }

  #stopServing(rt: ResourceType): void {
    this.#registry.remove(rt.group, rt.plural);
    this.#unserved(rt);
  }

  committed(rt: ResourceType, event: StoreEvent, obj: KubeObject): void {
    const rk = resourceKey(rt);
    this.#types.set(rk, rt);
    const ref = refKey({ resource: rk, namespace: event.namespace, name: event.name });
    const uid = obj.metadata.uid ?? '';
    this.#indexOwners(ref, event.type === 'DELETED' ? [] : (obj.metadata.ownerReferences ?? []).map((o) => o.uid));
    if (event.type === 'DELETED') {
      this.#liveUids.delete(uid);
      if (event.namespace !== '' && this.#terminating.has(event.namespace)) {
        const nsName = event.namespace;
        this.#enqueue(() => this.#finishNamespace(nsName));
      }
      const crdName = rt.crdName;
      if (crdName !== undefined && this.#removingCrds.has(crdName)) this.#enqueue(() => this.#finishCrd(crdName));
      this.#enqueue(() => this.#collectDependents(uid));
      if (rk === CRD_RESOURCE_KEY) {
        const defined = crdResourceType(obj);
        if (defined !== undefined) this.#stopServing(defined);
      }
      return;
    }
    this.#liveUids.add(uid);
    if (rk === CRD_RESOURCE_KEY) this.#crdChanged(obj);
    if (rk === DEPLOYMENT_RESOURCE_KEY && this.#deploymentController) {
      const replicaSets = this.#registry.lookup('apps', 'v1', 'replicasets');
      if (replicaSets !== undefined) this.#enqueue(() => reconcileDeployment(this.#api, rt, replicaSets, event.namespace, event.name));
    }
    if (obj.metadata.deletionTimestamp === undefined) return;
    const finalizers = obj.metadata.finalizers ?? [];
    if (rk === NAMESPACE_RESOURCE_KEY) this.#enqueue(() => this.#terminateNamespace(rt, obj.metadata.name ?? ''));
    if (finalizers.includes('foregroundDeletion')) this.#enqueue(() => this.#foreground(rt, obj));
    if (finalizers.includes('orphan')) this.#enqueue(() => this.#orphan(rt, obj));
    if (finalizers.includes(CRD_FINALIZER) && rk === CRD_RESOURCE_KEY) this.#enqueue(() => this.#cleanupCrd(rt, obj));
  }

  /** Resolves once every pending controller action has run. */
  settled(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #enqueue(action: () => void): void {
    this.#queue.push(action);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#drain());
  }

  #drain(): void {
    while (this.#queue.length > 0) {
      const action = this.#queue.shift();
      try {
        action?.();
      } catch (e) {
        // An object deleted or changed by someone else meanwhile: the controller has nothing to do.
        if (!isStatusError(e)) throw e;
      }
    }
    this.#scheduled = false;
    const idle = this.#idle;
    this.#idle = [];
    for (const r of idle) r();
  }

  #indexOwners(ref: string, owners: string[]): void {
    const before = this.#ownersOf.get(ref);
    if (before === undefined ? owners.length === 0 : before.length === owners.length && before.every((u, i) => u === owners[i])) return;
    for (const uid of this.#ownersOf.get(ref) ?? []) this.#dependents.get(uid)?.delete(ref);
    if (owners.length === 0) this.#ownersOf.delete(ref);
    else this.#ownersOf.set(ref, owners);
    for (const uid of owners) {
      const set = this.#dependents.get(uid) ?? new Set<string>();
      set.add(ref);
      this.#dependents.set(uid, set);
    }
  }

  #dependentObjects(uid: string): { rt: ResourceType; ref: ObjectRef }[] {
    const out: { rt: ResourceType; ref: ObjectRef }[] = [];
    for (const key of this.#dependents.get(uid) ?? []) {
      const ref = parseRef(key);
      const rt = this.#types.get(ref.resource);
      if (rt !== undefined) out.push({ rt, ref });
    }
    return out;
  }

  /** Background collection: a dependent goes once none of its owners is left. */
  #collectDependents(uid: string): void {
    for (const { rt, ref } of this.#dependentObjects(uid)) {
      const owners = this.#ownersOf.get(refKey(ref)) ?? [];
      if (owners.some((o) => this.#liveUids.has(o))) continue;
      this.#tryDelete(rt, ref);
    }
    this.#dependents.delete(uid);
  }

  #tryDelete(rt: ResourceType, ref: ObjectRef): void {
    try {
      this.#api.delete(rt, ref.namespace, ref.name, { propagationPolicy: 'Background' }, TEST_CONTEXT);
    } catch (e) {
      if (!isStatusError(e) || e.code !== 404) throw e;
    }
  }

  #removeFinalizer(rt: ResourceType, obj: KubeObject, finalizer: string): void {
    const live = this.#api.read(rt, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    if (live === undefined || live.metadata.uid !== obj.metadata.uid) return;
    const next = clone(live);
    next.metadata.finalizers = (live.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    this.#api.upsert(rt, next);
  }

  #foreground(rt: ResourceType, owner: KubeObject): void {
    const uid = owner.metadata.uid ?? '';
    for (const { rt: drt, ref } of this.#dependentObjects(uid)) this.#tryDelete(drt, ref);
    this.#removeFinalizer(rt, owner, 'foregroundDeletion');
  }

  #orphan(rt: ResourceType, owner: KubeObject): void {
    const uid = owner.metadata.uid ?? '';
    for (const { rt: drt, ref } of this.#dependentObjects(uid)) {
      const dep = this.#api.read(drt, ref.namespace, ref.name);
      if (dep === undefined) continue;
      dep.metadata.ownerReferences = (dep.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
      if (dep.metadata.ownerReferences.length === 0) delete dep.metadata.ownerReferences;
      this.#api.upsert(drt, dep);
    }
    this.#dependents.delete(uid);
    this.#removeFinalizer(rt, owner, 'orphan');
  }

  /** Deletes everything in the namespace; it goes once nothing is left (finalizers may hold content). */
  #terminateNamespace(nsType: ResourceType, name: string): void {
    this.#terminating.set(name, nsType);
    const store = this.#api.store;
    for (const rt of this.#registry.all()) {
      if (!rt.namespaced) continue;
      for (const rev of store.page(rt, { namespace: name, atRv: store.resourceVersion }).items) {
        const obj = JSON.parse(rev.json as string) as KubeObject;
        if (obj.metadata.deletionTimestamp !== undefined) continue;
        this.#tryDelete(rt, { resource: resourceKey(rt), namespace: name, name: obj.metadata.name ?? '' });
      }
    }
    this.#finishNamespace(name);
  }

  #finishNamespace(name: string): void {
    const nsType = this.#terminating.get(name);
    if (nsType === undefined) return;
    const store = this.#api.store;
    const left = this.#registry.all().some((rt) => rt.namespaced && store.page(rt, { namespace: name, atRv: store.resourceVersion, limit: 1 }).items.length > 0);
    if (left) return;
    this.#terminating.delete(name);
    const ns = this.#api.read(nsType, '', name);
    if (ns === undefined) return;
    this.#api.upsert(nsType, { ...ns, spec: { ...(isJsonObject(ns.spec) ? ns.spec : {}), finalizers: [] } });
  }

  #crdChanged(crd: KubeObject): void {
    const rt = crdResourceType(crd);
    if (rt === undefined) return;
    const builtin = this.#registry.all().some((t) => t.crdName === undefined && t.group === rt.group && t.plural === rt.plural);
    if (builtin) return;
    if (crd.metadata.deletionTimestamp === undefined) this.#registry.add(rt);
    const status = isJsonObject(crd.status) ? crd.status : {};
    const established = Array.isArray(status.conditions) && status.conditions.some((c) => isJsonObject(c) && c.type === 'Established');
    if (!established && crd.metadata.deletionTimestamp === undefined) this.#enqueue(() => this.#establish(crd));
  }

  #establish(crd: KubeObject): void {
    const crdType = this.#registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    const live = crdType === undefined ? undefined : this.#api.read(crdType, '', crd.metadata.name ?? '');
    if (crdType === undefined || live === undefined || live.metadata.uid !== crd.metadata.uid) return;
    const now = this.#api.now();
    const spec = isJsonObject(live.spec) ? live.spec : {};
    const next = clone(live);
    next.metadata.finalizers = [...new Set([...(live.metadata.finalizers ?? []), CRD_FINALIZER])];
    next.status = {
      conditions: [
        { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
        { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      ],
      acceptedNames: isJsonObject(spec.names) ? spec.names : {},
      storedVersions: [storageVersion(resourceTypeFromCrd(live))],
    };
    this.#api.upsert(crdType, next);
  }

  /** Deletes every instance; the definition goes once none is left (finalizers may hold instances). */
  #cleanupCrd(crdType: ResourceType, crd: KubeObject): void {
    const rt = resourceTypeFromCrd(crd);
    const name = crd.metadata.name ?? '';
    this.#removingCrds.set(name, { crdType, crd, rt });
    const store = this.#api.store;
    for (const rev of store.page(rt, { atRv: store.resourceVersion }).items) {
      const obj = JSON.parse(rev.json as string) as KubeObject;
      if (obj.metadata.deletionTimestamp !== undefined) continue;
      this.#tryDelete(rt, { resource: resourceKey(rt), namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' });
    }
    this.#finishCrd(name);
  }

  #finishCrd(name: string): void {
    const pending = this.#removingCrds.get(name);
    if (pending === undefined) return;
    const store = this.#api.store;
    if (store.page(pending.rt, { atRv: store.resourceVersion, limit: 1 }).items.length > 0) return;
    this.#removingCrds.delete(name);
    this.#stopServing(pending.rt);
    this.#removeFinalizer(pending.crdType, pending.crd, CRD_FINALIZER);
  }
}

function crdResourceType(crd: KubeObject): ResourceType | undefined {
  try {
    return resourceTypeFromCrd(crd);
  } catch {
    return undefined;
  }
}

function refKey(ref: ObjectRef): string {
  return `${ref.resource}|${ref.namespace}|${ref.name}`;
}

function parseRef(key: string): ObjectRef {
  const [resource = '', namespace = '', name = ''] = key.split('|');
  return { resource, namespace, name };
}
