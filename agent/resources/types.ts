/**
 * The vocabulary of the resource cache (docs/cache.md): the kinds an API server serves, as
 * discovery describes them, and the scopes the cache watches.
 */

/** One kind an API server serves, at its group's preferred version. */
export interface ResourceType {
  /** Empty for the core group. */
  group: string;
  version: string;
  kind: string;
  /** The path segment, e.g. `deployments`. */
  plural: string;
  /** Lower-case singular name; derived from `kind` where discovery leaves it empty (Kubernetes 1.20). */
  singular: string;
  namespaced: boolean;
  verbs: readonly string[];
}

/** One watch: a kind in one namespace, or in every namespace (or cluster-scoped) when `namespace` is empty. */
export interface CacheScope {
  type: ResourceType;
  namespace: string;
  /** Asked of the API server with every list and watch of the scope (agent/resources/cache-filter.ts). */
  labelSelector?: string;
  fieldSelector?: string;
}

/** `Kind.group`, or `Kind` for the core group: how settings, logs and the API name a kind. */
export function kindNameOfType(t: { kind: string; group: string }): string {
  return t.group === '' ? t.kind : `${t.kind}.${t.group}`;
}

/** Identifies a scope in maps and logs: `Kind.group` or `Kind.group/namespace`. */
export function scopeId(s: { type: { kind: string; group: string }; namespace: string } | { kind: string; group: string; namespace: string }): string {
  const t = 'type' in s ? s.type : s;
  return s.namespace === '' ? kindNameOfType(t) : `${kindNameOfType(t)}/${s.namespace}`;
}

/** `apiVersion` of a type: `v1`, or `apps/v1`. */
export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** The collection path of a scope, e.g. `/apis/apps/v1/namespaces/shop/deployments`. */
export function collectionPath(scope: CacheScope): string {
  const t = scope.type;
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  return scope.namespace === '' ? `${base}/${t.plural}` : `${base}/namespaces/${encodeURIComponent(scope.namespace)}/${t.plural}`;
}

/** The key of an object within its kind: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}
