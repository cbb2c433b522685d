/**
 * What an account's cache leaves out beyond kinds (docs/cache.md#what-is-cached), and how the API
 * server is asked to leave it out:
 *
 * - `omitNamespaces`: with `namespaces`, the omitted ones are simply not watched; without, each
 *   namespaced kind keeps its one watch over every namespace and asks for
 *   `fieldSelector=metadata.namespace!=<omitted>,...` (the `Namespace` kind for
 *   `metadata.name!=...`), so the API server drops those objects before they are encoded and sent;
 * - `onlySpinnakerManaged`: every list and watch carries `labelSelector=vendor-agent.io/managed=true`,
 *   the label deploy puts on what it applies (shared/operations/managed-mark.ts).
 */
import { MANAGED_SELECTOR } from '../../shared/operations/managed-mark.ts';
import type { AccountSettings__Output } from '../../shared/protocol/messages.ts';
import type { CacheScope, ResourceType } from './types.ts';

type FilterSettings = Pick<AccountSettings__Output, 'namespaces' | 'omitNamespaces' | 'onlySpinnakerManaged'>;

function names(list: readonly string[]): string[] {
  return [...new Set(list.map((n) => n.trim()).filter((n) => n !== ''))].sort();
}

/** The namespaces the cache covers: `only` those (undefined: every namespace), none of `omitted`. */
export function cachedNamespaces(settings: Pick<FilterSettings, 'namespaces' | 'omitNamespaces'>): { only: string[] | undefined; omitted: string[] } {
  const omitted = names(settings.omitNamespaces);
  const listed = names(settings.namespaces);
  return { only: listed.length === 0 ? undefined : listed.filter((n) => !omitted.includes(n)), omitted };
}

/** A field selector value: `\`, `,` and `=` escaped as the API server reads them. */
function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** The selectors of a watch of `type` over every namespace (or cluster-scoped), or, with `inNamespace`, of one namespace. */
export function scopeSelectors(type: Pick<ResourceType, 'group' | 'kind' | 'namespaced'>, inNamespace: boolean, settings: FilterSettings): Pick<CacheScope, 'labelSelector' | 'fieldSelector'> {
  const out: Pick<CacheScope, 'labelSelector' | 'fieldSelector'> = {};
  if (settings.onlySpinnakerManaged) out.labelSelector = MANAGED_SELECTOR;
  const { omitted } = cachedNamespaces(settings);
  if (inNamespace || omitted.length === 0) return out;
  const field = type.namespaced ? 'metadata.namespace' : type.group === '' && type.kind === 'Namespace' ? 'metadata.name' : undefined;
  if (field !== undefined) out.fieldSelector = omitted.map((n) => `${field}!=${escapeFieldValue(n)}`).join(',');
  return out;
}

/** The selectors of a scope as query parameters of its lists and watches. */
export function selectorQuery(scope: Pick<CacheScope, 'labelSelector' | 'fieldSelector'>): Record<string, string> {
  return {
    ...(scope.labelSelector === undefined ? {} : { labelSelector: scope.labelSelector }),
    ...(scope.fieldSelector === undefined ? {} : { fieldSelector: scope.fieldSelector }),
  };
}

/**
 * What the cache's progress is of, for the resume exchange: the API server's URL, and the selectors
 * a scope's objects were chosen by. Progress recorded under other selectors is then not offered and
 * the scopes list again, so a list's sync removes from the table what the new selectors leave out
 * (a resumed watch would never mention those objects).
 */
export function progressSource(server: string, settings: FilterSettings): string {
  const parts: string[] = [];
  if (settings.onlySpinnakerManaged) parts.push(`labelSelector ${MANAGED_SELECTOR}`);
  const { only, omitted } = cachedNamespaces(settings);
  if (only === undefined && omitted.length > 0) parts.push(`omitNamespaces ${omitted.join(',')}`);
  return parts.length === 0 ? server : `${server} (${parts.join('; ')})`;
}
