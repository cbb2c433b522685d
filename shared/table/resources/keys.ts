import { PK_PREFIX } from '../core/keys.ts';

// Keys of the resource cache: sort keys use the kind in lower case, so a query by kind is a key prefix.

/** One watch of the cache: a kind in one namespace, or everywhere when `namespace` is empty. */
export interface Scope {
  group: string;
  kind: string;
  namespace: string;
}

export interface ResourceRef {
  group: string;
  kind: string;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  name: string;
}

export function resourcePk(account: string): string {
  return `${PK_PREFIX.resource}${account}`;
}

export function cachePk(account: string): string {
  return `${PK_PREFIX.cache}${account}`;
}

/** Sort-key prefix of a kind in a group (`deployment#apps#`), and of one namespace of it. */
export function kindPrefix(kind: string, group: string): string {
  return `${kind.toLowerCase()}#${group}#`;
}

export function scopePrefix(scope: Scope): string {
  return kindPrefix(scope.kind, scope.group) + (scope.namespace === '' ? '' : `${scope.namespace}#`);
}

export function resourceSk(ref: ResourceRef): string {
  return `${kindPrefix(ref.kind, ref.group)}${ref.namespace}#${ref.name}`;
}

/** DynamoDB's bound on a sort key, in UTF-8 bytes: a longer key is refused by the table on every try. */
export const MAX_SORT_KEY_BYTES = 1024;

export function fitsSortKey(sk: string): boolean {
  return Buffer.byteLength(sk, 'utf8') <= MAX_SORT_KEY_BYTES;
}

export function podMetricsPk(account: string): string {
  return `${PK_PREFIX.podMetrics}${account}`;
}

/** The progress of one scope, in the cache partition: `SCOPE#<kind>#<group>#[<namespace>#]`. */
export function progressSk(scope: Scope): string {
  return `SCOPE#${scopePrefix(scope)}`;
}

/**
 * When each scope's stored progress was last seen current (`scopes.ts`): one item beside the progress,
 * under its prefix so that the one Query of a resume reads it too. `~` is in no kind's name, and sorts
 * after every one.
 */
export const SCOPES_SEEN_SK = 'SCOPE#~seen';

/** Sort-key prefix of the scope set's items, one per kind (`scope-set.ts`). */
export const SCOPE_SET_PREFIX = 'SCOPESET#';

/** A scope set kind's item: the kind as it is, not in lower case as in the objects' keys, so two kinds never share one. */
export function scopeSetKindSk(k: { group: string; kind: string }): string {
  return `${SCOPE_SET_PREFIX}${k.kind}#${k.group}#`;
}

/** The scope set as earlier versions stored it (`scope-set.ts`), and the cache health: one item each in the cache partition. */
export const SCOPES_SK = 'SCOPES';
export const HEALTH_SK = 'HEALTH';
