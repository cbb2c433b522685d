/**
 * What an account caches, from discovery and the per-account settings (docs/cache.md#what-is-cached):
 *
 * - every kind that can be listed and watched, narrowed by `kinds` and `omitKinds` (singular kind
 *   names without group, compared without case; `Kind.group` names one group's kind);
 * - `onlyNamespacedResources` leaves cluster-scoped kinds out;
 * - `namespaces` makes one watch per namespace and namespaced kind;
 * - `omitNamespaces` and `onlySpinnakerManaged` leave objects out (cache-filter.ts): a namespace
 *   listed in both `namespaces` and `omitNamespaces` is not watched;
 * - when `namespaces` or `onlyNamespacedResources` restrict the account, the listed namespaces and
 *   the listed `customResourceDefinitions` are synthetic resources: sent, never queried or watched.
 *   A synthetic kind is only made when its real kind is not watched, so the two never mix.
 */
import type { AccountSettings__Output } from '../../shared/protocol/messages.ts';
import { cachedNamespaces, scopeSelectors } from './cache-filter.ts';
import type { CacheScope, ResourceType } from './types.ts';

export interface SyntheticCrd {
  kind: string;
  group: string;
  /** From discovery when the cluster serves the kind; otherwise the lower-case kind. */
  plural: string;
  scope: 'Cluster' | 'Namespaced';
}

export interface Selection {
  /** The watches, in a stable order (kind, then namespace). */
  scopes: CacheScope[];
  syntheticNamespaces: string[];
  syntheticCrds: SyntheticCrd[];
}

type CacheSettings = Pick<
  AccountSettings__Output,
  'kinds' | 'omitKinds' | 'namespaces' | 'omitNamespaces' | 'onlyNamespacedResources' | 'onlySpinnakerManaged' | 'customResourceDefinitions'
>;

export const NAMESPACE_TYPE = { group: '', kind: 'Namespace' } as const;
export const CRD_TYPE = { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' } as const;

/** Whether a `kinds`/`omitKinds` entry names `t`. */
export function kindMatches(entry: string, t: ResourceType): boolean {
  const e = entry.trim().toLowerCase();
  if (e === '') return false;
  if (e.includes('.')) return e === `${t.kind}.${t.group}`.toLowerCase();
  return e === t.kind.toLowerCase() || e === t.singular;
}

function isType(t: { group: string; kind: string }, ref: { group: string; kind: string }): boolean {
  return t.group === ref.group && t.kind === ref.kind;
}

/** `Kind.group` split at its first dot. */
function parseCrdKind(kind: string): { kind: string; group: string } | undefined {
  const dot = kind.indexOf('.');
  if (dot <= 0 || dot === kind.length - 1) return undefined;
  return { kind: kind.slice(0, dot), group: kind.slice(dot + 1) };
}

export function selectScopes(types: readonly ResourceType[], settings: CacheSettings): Selection {
  const { only } = cachedNamespaces(settings);
  const listed = only !== undefined;
  const namespaces = only ?? [];
  const onlyNamespaced = settings.onlyNamespacedResources;
  const restricted = listed || onlyNamespaced;

  const cached = types
    .filter((t) => settings.kinds.length === 0 || settings.kinds.some((k) => kindMatches(k, t)))
    .filter((t) => !settings.omitKinds.some((k) => kindMatches(k, t)))
    .filter((t) => t.namespaced || !onlyNamespaced)
    // Watching every namespace would show namespaces the account is not restricted to.
    .filter((t) => !(listed && isType(t, NAMESPACE_TYPE)))
    .sort((a, b) => (a.kind === b.kind ? a.group.localeCompare(b.group) : a.kind.localeCompare(b.kind)));

  const scopes: CacheScope[] = [];
  for (const type of cached) {
    if (type.namespaced && listed) for (const namespace of namespaces) scopes.push({ type, namespace, ...scopeSelectors(type, true, settings) });
    else scopes.push({ type, namespace: '', ...scopeSelectors(type, false, settings) });
  }

  const watches = (ref: { group: string; kind: string }) => cached.some((t) => isType(t, ref));
  const syntheticNamespaces = restricted && !watches(NAMESPACE_TYPE) ? namespaces : [];
  const syntheticCrds: SyntheticCrd[] = [];
  if (restricted && !watches(CRD_TYPE)) {
    const seen = new Set<string>();
    for (const crd of settings.customResourceDefinitions) {
      const parsed = parseCrdKind(crd.kind.trim());
      if (parsed === undefined) continue;
      const key = `${parsed.kind}.${parsed.group}`.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      const served = types.find((t) => t.group === parsed.group && t.kind.toLowerCase() === parsed.kind.toLowerCase());
      syntheticCrds.push({
        kind: served?.kind ?? parsed.kind,
        group: parsed.group,
        plural: served?.plural ?? parsed.kind.toLowerCase(),
        scope: crd.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
      });
    }
  }
  return { scopes, syntheticNamespaces, syntheticCrds };
}

/** `customResourceDefinitions` entries that are not of the form `Kind.group`, for a warning. */
export function badCrdKinds(settings: CacheSettings): string[] {
  return settings.customResourceDefinitions.map((c) => c.kind).filter((k) => parseCrdKind(k.trim()) === undefined);
}
