/**
 * Which kinds a cluster serves: the legacy `/api/v1` and every group's preferred version under
 * `/apis`, read the way `kubectl api-resources` does. Only kinds that can be listed and watched are
 * kept; subresources (`pods/status`) are not kinds. A group version that fails to answer (an
 * aggregated API whose service is down answers 503) is reported and left out, so one broken
 * extension never stops the cache of the others.
 */
import type { ClusterClient } from '../clusters/index.ts';
import type { ResourceType } from './types.ts';

interface ApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
}

interface ApiResourceList {
  groupVersion?: string;
  resources?: ApiResource[];
}

interface ApiGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string; version: string }; versions?: { groupVersion: string; version: string }[] }[];
}

export interface ServedKinds {
  types: ResourceType[];
  /** Group versions that could not be read, with why. */
  failed: { groupVersion: string; error: string }[];
}

/** Groups whose kinds are served by other means or are not resources to cache. */
const SKIPPED_GROUPS = new Set(['metrics.k8s.io']);

function typesOf(list: ApiResourceList, group: string, version: string): ResourceType[] {
  const out: ResourceType[] = [];
  for (const r of list.resources ?? []) {
    if (r.name.includes('/')) continue;
    const verbs = r.verbs ?? [];
    if (!verbs.includes('list') || !verbs.includes('watch')) continue;
    out.push({
      group,
      version,
      kind: r.kind,
      plural: r.name,
      singular: r.singularName || r.kind.toLowerCase(),
      namespaced: r.namespaced,
      verbs,
    });
  }
  return out;
}

export async function discoverServedKinds(cluster: ClusterClient, signal?: AbortSignal): Promise<ServedKinds> {
  const get = async <T>(path: string): Promise<T> => (await cluster.request({ path, ...(signal === undefined ? {} : { signal }) })).json<T>();
  const [core, groups] = await Promise.all([get<ApiResourceList>('/api/v1'), get<ApiGroupList>('/apis')]);
  const types = typesOf(core, '', 'v1');
  const failed: ServedKinds['failed'] = [];
  const preferred = (groups.groups ?? [])
    .filter((g) => !SKIPPED_GROUPS.has(g.name))
    .map((g) => ({ group: g.name, version: g.preferredVersion?.version ?? g.versions?.[0]?.version }))
    .filter((g): g is { group: string; version: string } => g.version !== undefined);
  const lists = await Promise.all(
    preferred.map(async (g) => {
      try {
        return typesOf(await get<ApiResourceList>(`/apis/${g.group}/${g.version}`), g.group, g.version);
      } catch (e) {
        failed.push({ groupVersion: `${g.group}/${g.version}`, error: (e as Error).message });
        return [];
      }
    }),
  );
  // A group that failed because the caller gave up is no answer at all: the caller is stopping.
  signal?.throwIfAborted();
  for (const l of lists) types.push(...l);
  return { types, failed };
}
