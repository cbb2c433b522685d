import { deepEqual, getPath, isJsonObject, type JsonValue, type KubeObject } from './objects.ts';
import type { ResourceType } from './resource-types.ts';
import { invalid, type FieldError } from './status.ts';

/**
 * The validation a client meets most often on a real kube-apiserver: names, labels, the required
 * fields of workloads, selectors that must match their template, immutable selectors, and the shape
 * of a CustomResourceDefinition. Failures are `422 Invalid` with one cause per field, as on the wire.
 */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_KEY_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Kinds whose names must be DNS labels rather than subdomains. */
const LABEL_NAMED = new Set(['Namespace', 'Service']);

function quoted(v: JsonValue | undefined): string {
  return JSON.stringify(v ?? null);
}

/** A label map as kube-apiserver prints a bad value of that type (Go's `%#v`, keys sorted). */
function goStringMap(m: Record<string, JsonValue>): string {
  const pairs = Object.keys(m).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(String(m[k]))}`);
  return `map[string]string{${pairs.join(', ')}}`;
}

function validateName(rt: ResourceType, name: string, errors: FieldError[]): void {
  const labelNamed = LABEL_NAMED.has(rt.kind) && rt.group === '';
  const ok = labelNamed ? LABEL.test(name) && name.length <= 63 : SUBDOMAIN.test(name) && name.length <= 253;
  if (!ok) errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', detail: `${quoted(name)}: ${labelNamed ? LABEL_MSG : SUBDOMAIN_MSG}` });
}

function validateLabels(obj: KubeObject, errors: FieldError[]): void {
  for (const [k, v] of Object.entries(obj.metadata.labels ?? {})) {
    const slash = k.lastIndexOf('/');
    const prefix = slash < 0 ? '' : k.slice(0, slash);
    const name = slash < 0 ? k : k.slice(slash + 1);
    if (!LABEL_KEY_NAME.test(name) || name.length > 63 || (prefix !== '' && !SUBDOMAIN.test(prefix))) {
      errors.push({ type: 'FieldValueInvalid', field: 'metadata.labels', detail: `${quoted(k)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    }
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      errors.push({ type: 'FieldValueInvalid', field: `metadata.labels`, detail: `${quoted(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    }
  }
}

function validateContainers(spec: JsonValue | undefined, path: string, errors: FieldError[]): void {
  const containers = isJsonObject(spec) ? spec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) {
    errors.push({ type: 'FieldValueRequired', field: `${path}.containers`, detail: '' });
    return;
  }
  containers.forEach((c, i) => {
    if (!isJsonObject(c) || typeof c.name !== 'string' || c.name === '') {
      errors.push({ type: 'FieldValueRequired', field: `${path}.containers[${i}].name`, detail: '' });
    }
    if (!isJsonObject(c) || typeof c.image !== 'string' || c.image === '') {
      errors.push({ type: 'FieldValueRequired', field: `${path}.containers[${i}].image`, detail: '' });
    }
  });
}

const WORKLOADS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet']);

function validateWorkload(obj: KubeObject, errors: FieldError[]): void {
  const selector = getPath(obj, 'spec.selector');
  const matchLabels = isJsonObject(selector) && isJsonObject(selector.matchLabels) ? selector.matchLabels : undefined;
  const hasExpressions = isJsonObject(selector) && Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0;
  if (!isJsonObject(selector) || (matchLabels === undefined && !hasExpressions)) {
    errors.push({ type: 'FieldValueRequired', field: 'spec.selector', detail: '' });
  }
  const templateLabels = getPath(obj, 'spec.template.metadata.labels');
  const labels = isJsonObject(templateLabels) ? templateLabels : {};
  if (matchLabels !== undefined && !Object.entries(matchLabels).every(([k, v]) => labels[k] === v)) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.template.metadata.labels', detail: `${goStringMap(labels)}: \`selector\` does not match template \`labels\`` });
  }
  validateContainers(getPath(obj, 'spec.template.spec') as JsonValue | undefined, 'spec.template.spec', errors);
}

function validateCrd(obj: KubeObject, errors: FieldError[]): void {
  const spec = isJsonObject(obj.spec) ? obj.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const plural = typeof names.plural === 'string' ? names.plural : '';
  if (group === '' || !group.includes('.')) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.group', detail: `${quoted(group)}: should be a domain with at least one dot` });
  }
  const protectedGroup = /(^|\.)(k8s|kubernetes)\.io$/.test(group);
  if (protectedGroup && obj.metadata.annotations?.['api-approved.kubernetes.io'] === undefined) {
    errors.push({ type: 'FieldValueRequired', field: 'metadata.annotations[api-approved.kubernetes.io]', detail: 'protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111' });
  }
  if (plural === '') errors.push({ type: 'FieldValueRequired', field: 'spec.names.plural', detail: '' });
  if (typeof names.kind !== 'string' || names.kind === '') errors.push({ type: 'FieldValueRequired', field: 'spec.names.kind', detail: '' });
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({ type: 'FieldValueNotSupported', field: 'spec.scope', detail: `${quoted(spec.scope)}: supported values: "Cluster", "Namespaced"` });
  }
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  if (versions.length === 0) errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', detail: '[]: must have exactly one version marked as storage version' });
  else if (versions.filter((v) => v.storage === true).length !== 1) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.versions', detail: `${quoted(versions.map((v) => v.name ?? null))}: must have exactly one version marked as storage version` });
  }
  if (obj.metadata.name !== `${plural}.${group}`) {
    errors.push({ type: 'FieldValueInvalid', field: 'metadata.name', detail: `${quoted(obj.metadata.name)}: must be spec.names.plural+"."+spec.group` });
  }
}

export function validateObject(rt: ResourceType, obj: KubeObject, old?: KubeObject): void {
  const errors: FieldError[] = [];
  validateName(rt, obj.metadata.name ?? '', errors);
  validateLabels(obj, errors);
  const builtin = rt.crdName === undefined;
  if (builtin && rt.kind === 'Pod') validateContainers(obj.spec as JsonValue | undefined, 'spec', errors);
  if (builtin && WORKLOADS.has(rt.kind)) {
    validateWorkload(obj, errors);
    if (old !== undefined && !deepEqual(getPath(old, 'spec.selector'), getPath(obj, 'spec.selector'))) {
      errors.push({ type: 'FieldValueInvalid', field: 'spec.selector', detail: `${quoted(getPath(obj, 'spec.selector') as JsonValue)}: field is immutable` });
    }
  }
  if (builtin && rt.kind === 'Job') validateContainers(getPath(obj, 'spec.template.spec') as JsonValue | undefined, 'spec.template.spec', errors);
  if (builtin && rt.kind === 'CronJob') {
    if (typeof getPath(obj, 'spec.schedule') !== 'string') errors.push({ type: 'FieldValueRequired', field: 'spec.schedule', detail: '' });
    validateContainers(getPath(obj, 'spec.jobTemplate.spec.template.spec') as JsonValue | undefined, 'spec.jobTemplate.spec.template.spec', errors);
  }
  if (builtin && rt.kind === 'CustomResourceDefinition') validateCrd(obj, errors);
  if (errors.length > 0) throw invalid(rt.group, rt.kind, obj.metadata.name ?? '', errors);
}

export function missingName(rt: ResourceType): never {
  throw invalid(rt.group, rt.kind, '', [{ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' }]);
}
