import type { Scope } from './keys.ts';

/**
 * A scope set as the table keeps it, one item per kind (`scope-set.ts`): the grouping and the bound
 * on an item, apart from the table client, so the protocol's check of what agents send (which the
 * agent loads too) uses the same definition.
 */

/** The namespaces of one kind's item, as JSON text, at most this many bytes (docs/protocol.md#resource-keys). */
export const MAX_SCOPE_SET_KIND_BYTES = 256 * 1024;

/** One kind of a scope set and the namespaces it is cached in ('' for everywhere). */
export interface ScopeSetKind {
  group: string;
  kind: string;
  namespaces: string[];
}

export const scopeSetKindKey = (k: { group: string; kind: string }): string => `${k.group}/${k.kind}`;

/** The scopes grouped by kind, each kind's namespaces sorted and once each. */
export function scopeSetKinds(scopes: readonly Scope[]): ScopeSetKind[] {
  const byKind = new Map<string, { group: string; kind: string; namespaces: Set<string> }>();
  for (const s of scopes) {
    let k = byKind.get(scopeSetKindKey(s));
    if (k === undefined) byKind.set(scopeSetKindKey(s), (k = { group: s.group, kind: s.kind, namespaces: new Set() }));
    k.namespaces.add(s.namespace);
  }
  return [...byKind.values()].map((k) => ({ group: k.group, kind: k.kind, namespaces: [...k.namespaces].sort() }));
}

export function scopesOf(kinds: readonly ScopeSetKind[]): Scope[] {
  return kinds.flatMap((k) => k.namespaces.map((namespace) => ({ group: k.group, kind: k.kind, namespace })));
}

/** Whether each kind of `scopes` fits its item: the boundary refuses a set where one does not. */
export function scopeSetFits(scopes: readonly Scope[]): boolean {
  return scopeSetKinds(scopes).every((k) => Buffer.byteLength(JSON.stringify(k.namespaces), 'utf8') <= MAX_SCOPE_SET_KIND_BYTES);
}
