/**
 * What the control plane knows about Kubernetes kinds without asking a cluster: the built-in API
 * groups and the scope of their kinds. The API uses it to refuse what an account's settings forbid
 * before anything is stored; the agent asks the cluster's discovery for everything else (custom
 * resources, kinds of newer Kubernetes versions).
 */

/** API groups served by Kubernetes itself (not by a CustomResourceDefinition). `''` is the core group. */
export const BUILT_IN_GROUPS: ReadonlySet<string> = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'metrics.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** Built-in kinds that are not namespaced, as `group/Kind` (core kinds with an empty group: `/Namespace`). */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'authentication.k8s.io/SelfSubjectReview',
  'authentication.k8s.io/TokenReview',
  'authorization.k8s.io/SelfSubjectAccessReview',
  'authorization.k8s.io/SelfSubjectRulesReview',
  'authorization.k8s.io/SubjectAccessReview',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'internal.apiserver.k8s.io/StorageVersion',
  'node.k8s.io/RuntimeClass',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'storagemigration.k8s.io/StorageVersionMigration',
]);

/** Built-in kinds that are namespaced. */
const NAMESPACED: ReadonlySet<string> = new Set([
  '/Binding',
  '/ConfigMap',
  '/Endpoints',
  '/Event',
  '/LimitRange',
  '/PersistentVolumeClaim',
  '/Pod',
  '/PodTemplate',
  '/ReplicationController',
  '/ResourceQuota',
  '/Secret',
  '/Service',
  '/ServiceAccount',
  'apps/ControllerRevision',
  'apps/DaemonSet',
  'apps/Deployment',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'authorization.k8s.io/LocalSubjectAccessReview',
  'autoscaling/HorizontalPodAutoscaler',
  'batch/CronJob',
  'batch/Job',
  'coordination.k8s.io/Lease',
  'discovery.k8s.io/EndpointSlice',
  'events.k8s.io/Event',
  'networking.k8s.io/Ingress',
  'networking.k8s.io/NetworkPolicy',
  'policy/PodDisruptionBudget',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
  'resource.k8s.io/ResourceClaim',
  'resource.k8s.io/ResourceClaimTemplate',
  'storage.k8s.io/CSIStorageCapacity',
]);

/** Workload kinds `rollout restart` applies to, and the one `rollout undo` applies to. */
export const RESTARTABLE_KINDS: ReadonlySet<string> = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet']);
export const UNDOABLE_KINDS: ReadonlySet<string> = new Set(['apps/Deployment']);

/** The group of an apiVersion: `apps` of `apps/v1`, `''` of `v1`. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `group/Kind`, the key of the tables above. */
export function groupKind(apiVersion: string, kind: string): string {
  return `${groupOf(apiVersion)}/${kind}`;
}

export function isBuiltInGroup(apiVersion: string): boolean {
  return BUILT_IN_GROUPS.has(groupOf(apiVersion));
}

/** `Kind` of the core group or `Kind.group`, as `clusterScopedKinds` names kinds. */
export const KIND_NAME = /^[A-Za-z][A-Za-z0-9]*(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/** `Kind` for a kind of the core group, `Kind.group` otherwise: the form of `clusterScopedKinds`. */
export function kindName(apiVersion: string, kind: string): string {
  const group = groupOf(apiVersion);
  return group === '' ? kind : `${kind}.${group}`;
}

/** `Kind.group`, the form of `customResourceDefinitions[].kind`. */
export function crdKindName(apiVersion: string, kind: string): string {
  return `${kind}.${groupOf(apiVersion)}`;
}

export type KindScope = 'Namespaced' | 'Cluster';

/**
 * The scope of a kind when it is known without a cluster: built-in kinds from the table, custom kinds
 * from the account's `customResourceDefinitions` (scope `Namespaced` unless said otherwise). Undefined
 * for a kind only the cluster's discovery can tell about.
 */
export function knownScope(
  apiVersion: string,
  kind: string,
  crds: readonly { kind: string; scope?: string | undefined }[] = [],
): KindScope | undefined {
  if (isBuiltInGroup(apiVersion)) {
    const key = groupKind(apiVersion, kind);
    return CLUSTER_SCOPED.has(key) ? 'Cluster' : NAMESPACED.has(key) ? 'Namespaced' : undefined;
  }
  const listed = crds.find((c) => c.kind === crdKindName(apiVersion, kind));
  if (listed === undefined) return undefined;
  return listed.scope === 'Cluster' ? 'Cluster' : 'Namespaced';
}
