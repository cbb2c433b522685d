import { createHash } from 'node:crypto';
import { VendorError } from '../../shared/errors.ts';
import { isJsonObject, type JsonObject, type KubeObject } from './objects.ts';
import { apiVersionOf, BUILTIN_RESOURCES, CUSTOM_RESOURCE_VERBS, type ResourceType } from './resource-types.ts';

/**
 * What the server serves: built-in kinds plus those CustomResourceDefinitions add, looked up by
 * group/version/plural (URL paths) and by apiVersion/kind (request bodies), and rendered as the
 * discovery documents kube-apiserver answers on `/api`, `/apis` and each group version.
 */
export interface MetricsGroupState {
  enabled: boolean;
}

const METRICS_GROUP = 'metrics.k8s.io';
const METRICS_VERSION = 'v1beta1';

export class Registry {
  readonly #types: ResourceType[] = [];
  readonly #byPath = new Map<string, ResourceType>();
  readonly #metrics: MetricsGroupState;

  constructor(metrics: MetricsGroupState) {
    this.#metrics = metrics;
    for (const rt of BUILTIN_RESOURCES) this.add(rt);
  }

  add(rt: ResourceType): void {
    this.remove(rt.group, rt.plural);
    this.#types.push(rt);
    for (const v of rt.versions) this.#byPath.set(`${rt.group}/${v}/${rt.plural}`, rt);
  }

  remove(group: string, plural: string): void {
    const i = this.#types.findIndex((t) => t.group === group && t.plural === plural);
    if (i < 0) return;
    const [old] = this.#types.splice(i, 1);
    for (const v of old?.versions ?? []) this.#byPath.delete(`${group}/${v}/${plural}`);
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.#byPath.get(`${group}/${version}/${plural}`);
  }

  /** The resource of a body's `apiVersion` and `kind`, and the version it names. */
  byKind(apiVersion: string, kind: string): { rt: ResourceType; version: string } | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const rt = this.#types.find((t) => t.group === group && t.kind === kind && t.versions.includes(version));
    return rt === undefined ? undefined : { rt, version };
  }

  all(): readonly ResourceType[] {
    return this.#types;
  }

  get metricsEnabled(): boolean {
    return this.#metrics.enabled;
  }

  hasGroupVersion(group: string, version: string): boolean {
    if (group === METRICS_GROUP) return this.#metrics.enabled && version === METRICS_VERSION;
    return this.#types.some((t) => t.group === group && t.versions.includes(version));
  }

  /** Groups in the order `/apis` lists them, each with its versions, preferred first. */
  #groups(): { name: string; versions: string[] }[] {
    const groups = new Map<string, Set<string>>();
    for (const t of this.#types) {
      if (t.group === '') continue;
      const set = groups.get(t.group) ?? new Set<string>();
      for (const v of t.versions) set.add(v);
      groups.set(t.group, set);
    }
    if (this.#metrics.enabled) groups.set(METRICS_GROUP, new Set([METRICS_VERSION]));
    return [...groups].map(([name, versions]) => ({ name, versions: [...versions].sort(compareVersions) }));
  }

  apiVersions(serverAddress: string): JsonObject {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  apiGroupList(): JsonObject {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.#groups().map(groupDocument) };
  }

  apiGroup(name: string): JsonObject | undefined {
    const g = this.#groups().find((x) => x.name === name);
    return g === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(g) };
  }

  resourceList(group: string, version: string): JsonObject | undefined {
    if (!this.hasGroupVersion(group, version)) return undefined;
    const groupVersion = apiVersionOf(group, version);
    if (group === METRICS_GROUP) return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: METRICS_RESOURCES };
    const resources: JsonObject[] = [];
    for (const t of this.#types) {
      if (t.group !== group || !t.versions.includes(version)) continue;
      resources.push(resourceDocument(t, version));
      if (t.statusSubresource) resources.push(subresourceDocument(t, 'status'));
      if (t.scale !== undefined) {
        resources.push({ ...subresourceDocument(t, 'scale'), group: 'autoscaling', version: 'v1', kind: 'Scale' });
      }
    }
    const doc: JsonObject = { kind: 'APIResourceList', groupVersion, resources };
    return group === '' ? doc : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
  }
}

function groupDocument(g: { name: string; versions: string[] }): JsonObject {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  return { name: g.name, versions, preferredVersion: versions[0] ?? null };
}

function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

function resourceDocument(t: ResourceType, version: string): JsonObject {
  const doc: JsonObject = {
    name: t.plural,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: t.verbs,
  };
  if (t.shortNames.length > 0) doc.shortNames = t.shortNames;
  if (t.categories.length > 0) doc.categories = t.categories;
  doc.storageVersionHash = storageVersionHash(t.group, t.versions[0] ?? version, t.kind);
  return doc;
}

function subresourceDocument(t: ResourceType, sub: string): JsonObject {
  return { name: `${t.plural}/${sub}`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] };
}

const METRICS_RESOURCES: JsonObject[] = [
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
];

/** Kubernetes version priority: GA before beta before alpha, higher numbers first, others last. */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (m === null) return [3, 0, 0, v];
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stage, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
  return ra[3] < rb[3] ? -1 : ra[3] > rb[3] ? 1 : 0;
}

/** The resource type a CustomResourceDefinition object defines, or a reason it defines none. */
export function resourceTypeFromCrd(crd: KubeObject): ResourceType {
  const spec = crd.spec;
  if (!isJsonObject(spec)) throw new VendorError('invalid_input', 'a CustomResourceDefinition needs a spec');
  const names = isJsonObject(spec.names) ? spec.names : {};
  const group = String(spec.group ?? '');
  const plural = String(names.plural ?? '');
  const kind = String(names.kind ?? '');
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const served = versions.filter((v) => v.served === true);
  const storage = versions.find((v) => v.storage === true);
  const ordered = [...served].sort((a, b) => (a === storage ? -1 : b === storage ? 1 : compareVersions(String(a.name), String(b.name))));
  const storageSub = isJsonObject(storage?.subresources) ? storage.subresources : {};
  const scale = isJsonObject(storageSub.scale) ? storageSub.scale : undefined;
  const rt: ResourceType = {
    group,
    versions: ordered.map((v) => String(v.name)),
    plural,
    singular: String(names.singular ?? kind.toLowerCase()),
    kind,
    listKind: String(names.listKind ?? `${kind}List`),
    namespaced: spec.scope !== 'Cluster',
    verbs: CUSTOM_RESOURCE_VERBS,
    shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
    categories: Array.isArray(names.categories) ? names.categories.map(String) : [],
    statusSubresource: isJsonObject(storageSub.status),
    selectableFields: [],
    generation: true,
    returnDeletedObject: false,
    strategicMerge: false,
    crdName: crd.metadata.name ?? '',
  };
  if (scale !== undefined) {
    rt.scale = {
      specReplicasPath: String(scale.specReplicasPath ?? '.spec.replicas'),
      statusReplicasPath: String(scale.statusReplicasPath ?? '.status.replicas'),
    };
    if (typeof scale.labelSelectorPath === 'string') rt.scale.labelSelectorPath = scale.labelSelectorPath;
  }
  return rt;
}
