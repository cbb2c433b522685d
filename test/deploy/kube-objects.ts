/**
 * Structural checks of the Kubernetes objects the project ships, per kind and version: the fields
 * the API server requires and the references between objects (a binding's role and subjects, a
 * Deployment's selector, service account, volumes, probe ports, a disruption budget's selector).
 * `problems()` lists every violation with the object and field, so a failing test names them all.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
};

type Json = Record<string, unknown>;

const KINDS: Record<string, { versions: string[]; namespaced: boolean }> = {
  Namespace: { versions: ['v1'], namespaced: false },
  ServiceAccount: { versions: ['v1'], namespaced: true },
  ConfigMap: { versions: ['v1'], namespaced: true },
  Secret: { versions: ['v1'], namespaced: true },
  Service: { versions: ['v1'], namespaced: true },
  Deployment: { versions: ['apps/v1'], namespaced: true },
  PodDisruptionBudget: { versions: ['policy/v1'], namespaced: true },
  Role: { versions: ['rbac.authorization.k8s.io/v1'], namespaced: true },
  RoleBinding: { versions: ['rbac.authorization.k8s.io/v1'], namespaced: true },
  ClusterRole: { versions: ['rbac.authorization.k8s.io/v1'], namespaced: false },
  ClusterRoleBinding: { versions: ['rbac.authorization.k8s.io/v1'], namespaced: false },
};

const RBAC_VERBS = new Set(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'bind', 'escalate', 'impersonate', 'use', '*']);
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IANA_PORT_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string');

export function at(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, key) => (isObject(o) ? o[key] : undefined), obj);
}

/** Every object of every YAML file below a folder (kustomization files left out), with its file. */
export function manifestFiles(dir: string, root: string): { file: string; objects: KubeObject[] }[] {
  const out: { file: string; objects: KubeObject[] }[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...manifestFiles(path, root));
    else if (/\.ya?ml$/.test(name) && name !== 'kustomization.yaml' && name !== 'vendor-agent.yml') {
      out.push({ file: relative(root, path), objects: parseObjects(readFileSync(path, 'utf8'), relative(root, path)) });
    }
  }
  return out;
}

export function parseObjects(text: string, source: string): KubeObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return [];
    if (!isObject(value)) throw new Error(`${source}: a document that is not a mapping`);
    return [value as KubeObject];
  });
}

export function describeObject(o: KubeObject): string {
  return `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;
}

function find(objects: KubeObject[], kind: string, name: string, namespace?: string): KubeObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
}

function checkMetadata(o: KubeObject, p: (field: string, message: string) => void): void {
  const spec = KINDS[o.kind];
  if (typeof o.apiVersion !== 'string') p('apiVersion', 'is required');
  if (typeof o.kind !== 'string') p('kind', 'is required');
  if (spec === undefined) return p('kind', `is not a kind this project ships (${Object.keys(KINDS).join(', ')})`);
  if (!spec.versions.includes(o.apiVersion)) p('apiVersion', `${o.apiVersion} does not serve ${o.kind} (expected ${spec.versions.join(' or ')})`);
  const name = o.metadata?.name;
  if (typeof name !== 'string') return p('metadata.name', 'is required');
  const labelNamed = o.kind === 'Namespace' || o.kind === 'Service';
  if (labelNamed ? !LABEL.test(name) || name.length > 63 : !SUBDOMAIN.test(name) || name.length > 253) p('metadata.name', `"${name}" is not a valid name`);
  if (spec.namespaced && typeof o.metadata.namespace !== 'string') p('metadata.namespace', 'is required for a namespaced kind');
  if (!spec.namespaced && o.metadata.namespace !== undefined) p('metadata.namespace', `${o.kind} is cluster-scoped`);
  for (const [key, value] of Object.entries(o.metadata.labels ?? {})) {
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) p(`metadata.labels.${key}`, `"${String(value)}" is not a label value`);
  }
}

function checkRules(rules: unknown, p: (field: string, message: string) => void): void {
  if (!Array.isArray(rules) || rules.length === 0) return p('rules', 'must list at least one rule');
  rules.forEach((rule, i) => {
    if (!isObject(rule)) return p(`rules[${i}]`, 'must be a mapping');
    if (!Array.isArray(rule.apiGroups) || !rule.apiGroups.every((g) => typeof g === 'string')) p(`rules[${i}].apiGroups`, 'must be a list of groups');
    if (!stringArray(rule.resources)) p(`rules[${i}].resources`, 'must be a non-empty list');
    if (!stringArray(rule.verbs)) p(`rules[${i}].verbs`, 'must be a non-empty list');
    else for (const verb of rule.verbs) if (!RBAC_VERBS.has(verb)) p(`rules[${i}].verbs`, `"${verb}" is not a verb`);
  });
}

function checkBinding(o: KubeObject, objects: KubeObject[], p: (field: string, message: string) => void): void {
  const roleRef = o.roleRef;
  if (!isObject(roleRef) || roleRef.apiGroup !== 'rbac.authorization.k8s.io' || typeof roleRef.name !== 'string') {
    return p('roleRef', 'needs apiGroup rbac.authorization.k8s.io, kind and name');
  }
  const allowed = o.kind === 'RoleBinding' ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!allowed.includes(String(roleRef.kind))) p('roleRef.kind', `must be ${allowed.join(' or ')}`);
  const role = find(objects, String(roleRef.kind), roleRef.name, roleRef.kind === 'Role' ? o.metadata.namespace : undefined);
  if (role === undefined) p('roleRef', `${String(roleRef.kind)} ${roleRef.name} is not among the objects`);
  if (!Array.isArray(o.subjects) || o.subjects.length === 0) return p('subjects', 'must name at least one subject');
  o.subjects.forEach((s: unknown, i) => {
    if (!isObject(s) || s.kind !== 'ServiceAccount' || typeof s.name !== 'string' || typeof s.namespace !== 'string') {
      return p(`subjects[${i}]`, 'must be a ServiceAccount with name and namespace');
    }
    if (find(objects, 'ServiceAccount', s.name, s.namespace) === undefined) p(`subjects[${i}]`, `service account ${s.namespace}/${s.name} is not among the objects`);
  });
}

function matches(selector: unknown, labels: unknown): boolean {
  return isObject(selector) && isObject(labels) && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function checkProbe(probe: unknown, field: string, ports: Map<string, number>, p: (field: string, message: string) => void): void {
  if (probe === undefined) return;
  const port = at(probe, 'httpGet.port');
  if (typeof at(probe, 'httpGet.path') !== 'string') p(`${field}.httpGet.path`, 'is required');
  const known = typeof port === 'string' ? ports.has(port) : [...ports.values()].includes(Number(port));
  if (!known) p(`${field}.httpGet.port`, `${String(port)} is not a port of the container`);
}

function checkDeployment(o: KubeObject, objects: KubeObject[], p: (field: string, message: string) => void): void {
  const spec = o.spec;
  if (!isObject(spec)) return p('spec', 'is required');
  if (!Number.isInteger(spec.replicas) || (spec.replicas as number) < 1) p('spec.replicas', 'must be a whole number of at least 1');
  const selector = at(spec, 'selector.matchLabels');
  if (!matches(selector, at(spec, 'template.metadata.labels'))) p('spec.selector.matchLabels', 'must be non-empty and match spec.template.metadata.labels');
  const pod = at(spec, 'template.spec');
  if (!isObject(pod)) return p('spec.template.spec', 'is required');
  const account = pod.serviceAccountName;
  if (typeof account === 'string' && find(objects, 'ServiceAccount', account, o.metadata.namespace) === undefined) {
    p('spec.template.spec.serviceAccountName', `${account} is not among the objects`);
  }
  const volumes = Array.isArray(pod.volumes) ? (pod.volumes as Json[]) : [];
  for (const v of volumes) {
    const cm = at(v, 'configMap.name');
    if (typeof cm === 'string' && find(objects, 'ConfigMap', cm, o.metadata.namespace) === undefined) p(`volumes.${String(v.name)}`, `ConfigMap ${cm} is not among the objects`);
    const secret = at(v, 'secret.secretName');
    if (typeof secret === 'string' && find(objects, 'Secret', secret, o.metadata.namespace) === undefined) p(`volumes.${String(v.name)}`, `Secret ${secret} is not among the objects`);
  }
  const containers = pod.containers;
  if (!Array.isArray(containers) || containers.length === 0) return p('spec.template.spec.containers', 'must list a container');
  (containers as Json[]).forEach((c, i) => {
    const field = `containers[${i}]`;
    if (typeof c.name !== 'string' || !LABEL.test(c.name)) p(`${field}.name`, 'is required and must be a DNS label');
    if (typeof c.image !== 'string' || c.image === '') p(`${field}.image`, 'is required');
    const ports = new Map<string, number>();
    for (const port of Array.isArray(c.ports) ? (c.ports as Json[]) : []) {
      if (!Number.isInteger(port.containerPort)) p(`${field}.ports`, 'containerPort must be a whole number');
      if (port.name !== undefined && (typeof port.name !== 'string' || port.name.length > 15 || !IANA_PORT_NAME.test(port.name))) p(`${field}.ports`, `name ${String(port.name)} is not a port name`);
      if (typeof port.name === 'string') ports.set(port.name, port.containerPort as number);
    }
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) checkProbe(c[probe], `${field}.${probe}`, ports, p);
    for (const mount of Array.isArray(c.volumeMounts) ? (c.volumeMounts as Json[]) : []) {
      if (!volumes.some((v) => v.name === mount.name)) p(`${field}.volumeMounts`, `volume ${String(mount.name)} is not declared`);
    }
  });
}

function checkPdb(o: KubeObject, objects: KubeObject[], p: (field: string, message: string) => void): void {
  const selector = at(o, 'spec.selector.matchLabels');
  const target = objects.find(
    (d) => d.kind === 'Deployment' && d.metadata.namespace === o.metadata.namespace && matches(selector, at(d, 'spec.template.metadata.labels')),
  );
  if (target === undefined) return p('spec.selector', 'selects no Deployment among the objects');
  const min = at(o, 'spec.minAvailable');
  if (typeof min === 'number' && min >= (at(target, 'spec.replicas') as number)) p('spec.minAvailable', `${min} would block every eviction of ${describeObject(target)}`);
}

/**
 * Every problem of a set of objects meant to be applied together; `existingNamespaces` are those the
 * operator provides (a Helm release's namespace, the namespaces a namespaced agent watches).
 */
export function problems(objects: KubeObject[], existingNamespaces: readonly string[] = []): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const p = (field: string, message: string) => out.push(`${describeObject(o)}: ${field} ${message}`);
    checkMetadata(o, p);
    const key = `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    if (seen.has(key)) p('metadata.name', 'is used twice');
    seen.add(key);
    const namespace = o.metadata?.namespace;
    if (namespace !== undefined && find(objects, 'Namespace', namespace) === undefined && !existingNamespaces.includes(namespace)) {
      p('metadata.namespace', `${namespace} is neither created by these objects nor one the operator provides`);
    }
    switch (o.kind) {
      case 'Role':
      case 'ClusterRole':
        checkRules(o.rules, p);
        break;
      case 'RoleBinding':
      case 'ClusterRoleBinding':
        checkBinding(o, objects, p);
        break;
      case 'ConfigMap':
        if (!isObject(o.data) || !Object.values(o.data).every((v) => typeof v === 'string')) p('data', 'must map keys to strings');
        break;
      case 'Secret':
        if (o.stringData !== undefined && (!isObject(o.stringData) || !Object.values(o.stringData).every((v) => typeof v === 'string'))) p('stringData', 'must map keys to strings');
        if (o.data !== undefined && (!isObject(o.data) || !Object.values(o.data).every((v) => typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v)))) p('data', 'must map keys to base64');
        break;
      case 'Deployment':
        checkDeployment(o, objects, p);
        break;
      case 'PodDisruptionBudget':
        checkPdb(o, objects, p);
        break;
    }
  }
  return out;
}
