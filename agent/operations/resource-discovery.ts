/**
 * Which resource serves a kind, as the cluster's discovery says: `apps/v1 Deployment` is
 * `deployments`, namespaced, with a `scale` subresource. One cache per account's cluster, filled one
 * group version at a time as operations need it (`/api/v1`, `/apis/<group>/<version>`), and read again
 * when a kind is not in it, since a CRD may have been installed since.
 */
// errors.ts, not index.ts: the cluster client (and @kubernetes/client-node) loads with the first account.
import { kubeErrorStatus } from '../clusters/errors.ts';
import type { ClusterClient } from '../clusters/index.ts';

export interface ResourceInfo {
  apiVersion: string;
  kind: string;
  /** Plural resource name, as in request paths. */
  resource: string;
  namespaced: boolean;
  /** Subresources the resource has (`status`, `scale`). */
  subresources: ReadonlySet<string>;
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

interface Entry {
  /** undefined: the group version is not served. */
  resources: Map<string, ResourceInfo> | undefined;
  fetchedAt: number;
}

export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export class ResourceDiscovery {
  readonly #cluster: ClusterClient;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<Entry>>();

  constructor(cluster: ClusterClient, now: () => number) {
    this.#cluster = cluster;
    this.#now = now;
  }

  /**
   * The resource of `kind` in `apiVersion`, or undefined when the cluster does not serve it. A miss
   * in what was cached before this call reads the group version again (once, shared by concurrent
   * callers).
   */
  async resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceInfo | undefined> {
    const asked = this.#now();
    let entry = this.#entries.get(apiVersion) ?? (await this.#fetch(apiVersion, signal));
    const found = entry.resources?.get(kind);
    if (found !== undefined) return found;
    if (entry.fetchedAt < asked) entry = await this.#fetch(apiVersion, signal);
    return entry.resources?.get(kind);
  }

  /** Forgets a group version, so the next resolve reads it (after a CRD was applied). */
  forget(apiVersion: string): void {
    this.#entries.delete(apiVersion);
  }

  #fetch(apiVersion: string, signal: AbortSignal | undefined): Promise<Entry> {
    const pending = this.#inFlight.get(apiVersion);
    if (pending !== undefined) return pending;
    const started = this.#now();
    const fetching = this.#cluster
      .request({ path: groupVersionPath(apiVersion), ...(signal === undefined ? {} : { signal }) })
      .then(
        (res) => ({ resources: indexResources(apiVersion, res.json<{ resources?: ApiResource[] }>().resources ?? []), fetchedAt: started }),
        (error: unknown) => {
          // A group version the server does not serve is an answer, not a failure.
          if (kubeErrorStatus(error) === 404) return { resources: undefined, fetchedAt: started };
          throw error;
        },
      )
      .then((entry: Entry) => {
        this.#entries.set(apiVersion, entry);
        return entry;
      })
      .finally(() => this.#inFlight.delete(apiVersion));
    this.#inFlight.set(apiVersion, fetching);
    return fetching;
  }
}

function indexResources(apiVersion: string, list: readonly ApiResource[]): Map<string, ResourceInfo> {
  const subresources = new Map<string, Set<string>>();
  for (const r of list) {
    const slash = r.name.indexOf('/');
    if (slash < 0) continue;
    const parent = r.name.slice(0, slash);
    if (!subresources.has(parent)) subresources.set(parent, new Set());
    subresources.get(parent)?.add(r.name.slice(slash + 1));
  }
  const byKind = new Map<string, ResourceInfo>();
  for (const r of list) {
    if (r.name.includes('/') || byKind.has(r.kind)) continue;
    byKind.set(r.kind, { apiVersion, kind: r.kind, resource: r.name, namespaced: r.namespaced, subresources: subresources.get(r.name) ?? new Set() });
  }
  return byKind;
}

/** The request path of an object (or of its collection when `name` is undefined). */
export function objectPath(info: ResourceInfo, namespace: string | undefined, name?: string, subresource?: string): string {
  const base = groupVersionPath(info.apiVersion);
  const ns = info.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${base}${ns}/${info.resource}${object}${subresource === undefined ? '' : `/${subresource}`}`;
}
