import { VendorError } from '../../shared/errors.ts';

/**
 * The kinds the test API server serves out of the box, described the way discovery describes them,
 * plus the behaviour flags that differ between kinds on a real kube-apiserver.
 */
export interface ScaleSubresource {
  /** Dotted path of the desired replica count, e.g. `.spec.replicas`. */
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  /** Versions this resource is served at; the first is the storage version. */
  versions: string[];
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  /** A `status` subresource: writes to the main resource keep the stored status and vice versa. */
  statusSubresource: boolean;
  scale?: ScaleSubresource;
  /** Field selector labels beyond `metadata.name` and `metadata.namespace`. */
  selectableFields: string[];
  /** Whether `metadata.generation` is kept and raised on spec changes. */
  generation: boolean;
  /** Whether DELETE answers with the deleted object rather than a Success Status. */
  returnDeletedObject: boolean;
  /**
   * Deletion is graceful (pods): DELETE first marks the object with `deletionTimestamp` and
   * `deletionGracePeriodSeconds` (a MODIFIED event, the state DELETE answers), then removes it.
   */
  gracefulDeletion?: boolean;
  /** Built-in kinds know their list merge keys; custom resources only take JSON and merge patches. */
  strategicMerge: boolean;
  /** Name of the CustomResourceDefinition that defines this resource, for custom resources. */
  crdName?: string;
}

export const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
/** kube-apiserver lists a custom resource's verbs in this order, not sorted as for built-in kinds. */
export const CUSTOM_RESOURCE_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

export function storageVersion(rt: ResourceType): string {
  const v = rt.versions[0];
  if (v === undefined) throw new VendorError('internal', `resource ${rt.plural} has no served version`);
  return v;
}

export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** Rewrites the stored apiVersion for a read at another served version of a custom resource. */
export function servedAs(rt: ResourceType, version: string, json: string): string {
  const stored = storageVersion(rt);
  if (version === stored) return json;
  const from = `"apiVersion":"${apiVersionOf(rt.group, stored)}"`;
  return json.replace(from, `"apiVersion":"${apiVersionOf(rt.group, version)}"`);
}

/** The store's bucket key of a resource: its group and plural name. */
export function resourceKey(rt: { group: string; plural: string }): string {
  return `${rt.group}/${rt.plural}`;
}

interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced?: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: boolean;
  fields?: string[];
  generation?: boolean;
  returnDeleted?: boolean;
  verbs?: string[];
  graceful?: boolean;
}

const REPLICAS_SCALE: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

function builtin(spec: BuiltinSpec): ResourceType {
  const rt: ResourceType = {
    group: spec.group,
    versions: [spec.version],
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    namespaced: spec.namespaced ?? true,
    verbs: spec.verbs ?? STANDARD_VERBS,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    statusSubresource: spec.status ?? false,
    selectableFields: spec.fields ?? [],
    generation: spec.generation ?? false,
    returnDeletedObject: spec.returnDeleted ?? false,
    strategicMerge: true,
  };
  if (spec.graceful === true) rt.gracefulDeletion = true;
  if (spec.scale === true) rt.scale = REPLICAS_SCALE;
  return rt;
}

const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

export const BUILTIN_RESOURCES: readonly ResourceType[] = [
  builtin({
    group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'],
    status: true, fields: ['status.phase'], returnDeleted: true,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  }),
  builtin({
    group: '', version: 'v1', plural: 'pods', kind: 'Pod', shortNames: ['po'], categories: ['all'], status: true,
    fields: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
    returnDeleted: true, graceful: true,
  }),
  builtin({
    group: '', version: 'v1', plural: 'services', kind: 'Service', shortNames: ['svc'], categories: ['all'], status: true,
    returnDeleted: true,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  }),
  builtin({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', shortNames: ['cm'] }),
  builtin({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', fields: ['type'] }),
  builtin({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', shortNames: ['sa'], returnDeleted: true }),
  builtin({
    group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], status: true,
    fields: ['spec.unschedulable'],
  }),
  builtin({ group: '', version: 'v1', plural: 'events', kind: 'Event', shortNames: ['ev'], fields: EVENT_FIELDS }),
  builtin({
    group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', shortNames: ['deploy'], categories: ['all'],
    status: true, scale: true, generation: true,
  }),
  builtin({
    group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', shortNames: ['rs'], categories: ['all'],
    status: true, scale: true, generation: true, fields: ['status.replicas'],
  }),
  builtin({
    group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', shortNames: ['sts'], categories: ['all'],
    status: true, scale: true, generation: true,
  }),
  builtin({
    group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', shortNames: ['ds'], categories: ['all'],
    status: true, generation: true,
  }),
  builtin({
    group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', categories: ['all'], status: true, generation: true,
    fields: ['status.successful'],
  }),
  builtin({
    group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob', shortNames: ['cj'], categories: ['all'],
    status: true, generation: true,
  }),
  builtin({
    group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', shortNames: ['ing'], status: true,
    generation: true,
  }),
  builtin({
    group: 'networking.k8s.io', version: 'v1', plural: 'networkpolicies', kind: 'NetworkPolicy', shortNames: ['netpol'],
    generation: true,
  }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding' }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role' }),
  builtin({
    group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition',
    namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], status: true, generation: true,
  }),
];

/** Plural name of the CustomResourceDefinition resource, whose writes change what the server serves. */
export const CRD_RESOURCE_KEY = 'apiextensions.k8s.io/customresourcedefinitions';
export const NAMESPACE_RESOURCE_KEY = '/namespaces';
export const DEPLOYMENT_RESOURCE_KEY = 'apps/deployments';
