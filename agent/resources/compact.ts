/**
 * The compact form of a cached object (docs/cache.md): what a control plane needs to show and find
 * a resource, about 1 KB or less so that storing it costs one write unit. Never `managedFields`, never
 * the `kubectl.kubernetes.io/last-applied-configuration` annotation, never the values of secrets or
 * config maps (their keys only). Built from each watch event and sent on; the agent keeps no copy.
 *
 * Every object keeps `apiVersion`, `kind` and the essential metadata (name, namespace, uid,
 * resourceVersion, generation, creation and deletion timestamps, labels, annotations, owner kinds and
 * names). Well-known kinds add a summary of their spec and status; any other kind keeps its spec and
 * status when they are small, and otherwise their scalar fields and condition types.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/** The size the compact form aims at; beyond it annotations, then labels, are cut down. */
export const COMPACT_TARGET_BYTES = 800;
const MAX_ANNOTATION_VALUE = 256;
const SMALL_PART_BYTES = 300;
const DROPPED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);
/** Annotations kept when the object is over its budget: the ones control planes read. */
const ESSENTIAL_ANNOTATION = /(^|\.)spinnaker\.io\/|^deployment\.kubernetes\.io\/revision$/;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** Copies the listed fields that are present. */
function pick(from: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (from[k] !== undefined && from[k] !== null) out[k] = from[k];
  return out;
}

function containers(spec: Obj): Json[] | undefined {
  const list = arr(spec.containers).map((c) => pick(obj(c), ['name', 'image']));
  return list.length > 0 ? list : undefined;
}

function conditions(status: Obj): Json[] | undefined {
  const list = arr(status.conditions).map((c) => pick(obj(c), ['type', 'status', 'reason']));
  return list.length > 0 ? list : undefined;
}

function templateContainers(spec: Obj): Obj | undefined {
  const c = containers(obj(obj(spec.template).spec));
  return c === undefined ? undefined : { spec: { containers: c } };
}

function withParts(spec: Obj | undefined, status: Obj | undefined): Obj {
  const out: Obj = {};
  if (spec !== undefined && Object.keys(spec).length > 0) out.spec = spec;
  if (status !== undefined && Object.keys(status).length > 0) out.status = status;
  return out;
}

function workload(o: Obj): Obj {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const s: Obj = pick(spec, ['replicas', 'paused', 'serviceName', 'schedule', 'suspend', 'completions', 'parallelism']);
  if (isObj(spec.selector) && isObj(spec.selector.matchLabels)) s.selector = { matchLabels: spec.selector.matchLabels };
  const t = templateContainers(spec);
  if (t !== undefined) s.template = t;
  const st: Obj = {};
  for (const [k, v] of Object.entries(status)) if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') st[k] = v;
  const c = conditions(status);
  if (c !== undefined) st.conditions = c;
  return withParts(s, st);
}

function pod(o: Obj): Obj {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const s: Obj = pick(spec, ['nodeName', 'serviceAccountName']);
  const c = containers(spec);
  if (c !== undefined) s.containers = c;
  const statuses = arr(status.containerStatuses).map(obj);
  const st: Obj = pick(status, ['phase', 'reason', 'podIP', 'startTime']);
  if (statuses.length > 0) {
    st.ready = `${statuses.filter((x) => x.ready === true).length}/${statuses.length}`;
    st.restarts = statuses.reduce((n, x) => n + (typeof x.restartCount === 'number' ? x.restartCount : 0), 0);
    const waiting = statuses
      .map((x) => ({ name: x.name ?? '', reason: obj(obj(x.state).waiting).reason ?? obj(obj(x.state).terminated).reason }))
      .filter((x) => typeof x.reason === 'string') as Json[];
    if (waiting.length > 0) st.waiting = waiting;
  }
  return withParts(s, st);
}

function service(o: Obj): Obj {
  const spec = obj(o.spec);
  const s = pick(spec, ['type', 'clusterIP', 'selector', 'externalName']);
  const ports = arr(spec.ports).map((p) => pick(obj(p), ['name', 'port', 'targetPort', 'protocol', 'nodePort']));
  if (ports.length > 0) s.ports = ports;
  const ingress = arr(obj(obj(o.status).loadBalancer).ingress).map((i) => pick(obj(i), ['ip', 'hostname']));
  return withParts(s, ingress.length > 0 ? { loadBalancer: { ingress } } : undefined);
}

function ingress(o: Obj): Obj {
  const spec = obj(o.spec);
  const s = pick(spec, ['ingressClassName']);
  const rules = arr(spec.rules).map((r) => {
    const rule = obj(r);
    const paths = arr(obj(rule.http).paths).map((p) => {
      const path = obj(p);
      const svc = obj(obj(path.backend).service);
      return { ...pick(path, ['path']), ...(svc.name === undefined ? {} : { service: svc.name }) };
    });
    return { ...pick(rule, ['host']), ...(paths.length > 0 ? { paths } : {}) };
  });
  if (rules.length > 0) s.rules = rules;
  const lb = arr(obj(obj(o.status).loadBalancer).ingress).map((i) => pick(obj(i), ['ip', 'hostname']));
  return withParts(s, lb.length > 0 ? { loadBalancer: { ingress: lb } } : undefined);
}

/** Config maps and secrets: which keys they hold, never the values. */
function keysOnly(o: Obj): Obj {
  const keys = [...Object.keys(obj(o.data)), ...Object.keys(obj(o.binaryData)), ...Object.keys(obj(o.stringData))].sort();
  return { ...pick(o, ['type', 'immutable']), ...(keys.length > 0 ? { dataKeys: keys } : {}) };
}

function node(o: Obj): Obj {
  const status = obj(o.status);
  const st: Obj = {};
  const c = conditions(status);
  if (c !== undefined) st.conditions = c;
  const addresses = arr(status.addresses).map((a) => pick(obj(a), ['type', 'address']));
  if (addresses.length > 0) st.addresses = addresses;
  const info = pick(obj(status.nodeInfo), ['kubeletVersion', 'osImage', 'architecture']);
  if (Object.keys(info).length > 0) st.nodeInfo = info;
  return withParts(pick(obj(o.spec), ['unschedulable', 'providerID']), st);
}

function event(o: Obj): Obj {
  const out = pick(o, ['type', 'reason', 'count', 'firstTimestamp', 'lastTimestamp', 'eventTime']);
  if (typeof o.message === 'string') out.message = o.message.slice(0, MAX_ANNOTATION_VALUE);
  const involved = pick(obj(o.involvedObject ?? o.regarding), ['kind', 'namespace', 'name']);
  if (Object.keys(involved).length > 0) out.involvedObject = involved;
  return out;
}

function crd(o: Obj): Obj {
  const spec = obj(o.spec);
  const s = pick(spec, ['group', 'scope']);
  const names = pick(obj(spec.names), ['kind', 'plural', 'singular']);
  if (Object.keys(names).length > 0) s.names = names;
  const versions = arr(spec.versions).map((v) => obj(v).name).filter((v) => typeof v === 'string');
  if (versions.length > 0) s.versions = versions;
  return withParts(s, undefined);
}

/** Scalars and condition types of a part too large to keep whole. */
function scalars(part: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(part)) {
    if (typeof v === 'string' ? v.length <= MAX_ANNOTATION_VALUE : typeof v !== 'object' || v === null) out[k] = v;
  }
  const c = conditions(part);
  if (c !== undefined) out.conditions = c;
  return out;
}

function generic(o: Obj): Obj {
  const out: Obj = {};
  for (const key of ['spec', 'status'] as const) {
    if (!isObj(o[key])) continue;
    const part = o[key];
    out[key] = JSON.stringify(part).length <= SMALL_PART_BYTES ? part : scalars(part);
  }
  return out;
}

const WORKLOADS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController', 'HorizontalPodAutoscaler']);

function summary(kind: string, group: string, o: Obj): Obj {
  if (group === '' && kind === 'Pod') return pod(o);
  if (group === '' && kind === 'Service') return service(o);
  if ((group === '' && kind === 'ConfigMap') || (group === '' && kind === 'Secret')) return keysOnly(o);
  if (group === '' && kind === 'Node') return node(o);
  if (kind === 'Event' && (group === '' || group === 'events.k8s.io')) return event(o);
  if (kind === 'Ingress' && group === 'networking.k8s.io') return ingress(o);
  if (kind === 'CustomResourceDefinition' && group === 'apiextensions.k8s.io') return crd(o);
  if (WORKLOADS.has(kind) && ['apps', 'batch', 'autoscaling', ''].includes(group)) return workload(o);
  if (group === '' && kind === 'Namespace') return withParts(undefined, pick(obj(o.status), ['phase']));
  return generic(o);
}

const META_FIELDS = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp'] as const;
/** `"key":` of each metadata field, serialized once rather than once per object. */
const META_KEYS = META_FIELDS.map((k) => `${JSON.stringify(k)}:`);

/** `"key":<json>` for each metadata field present, comma-separated. */
function coreMembers(meta: Obj): string {
  let out = '';
  for (let i = 0; i < META_FIELDS.length; i++) {
    const v = meta[META_FIELDS[i]!];
    if (v !== undefined && v !== null) out += `${out === '' ? '' : ','}${META_KEYS[i]!}${JSON.stringify(v)}`;
  }
  return out;
}

/** `"name":{...}` for a map with entries, else '' (written directly: no object is built for it). */
function mapMember(name: string, entries: [string, Json][]): string {
  if (entries.length === 0) return '';
  let out = '';
  for (const [k, v] of entries) {
    const value = JSON.stringify(v);
    if (value !== undefined) out += `${out === '' ? '' : ','}${JSON.stringify(k)}:${value}`;
  }
  return `"${name}":{${out}}`;
}

/**
 * `"name":{...}` for a whole map: one native serialization, in the same order as its entries
 * (JSON.stringify and Object.entries both follow the object's own key order).
 */
function wholeMapMember(name: string, map: Obj): string {
  for (const _ in map) return `"${name}":${JSON.stringify(map)}`;
  return '';
}

function keptAnnotation(key: string, value: Json): value is string {
  return !DROPPED_ANNOTATIONS.has(key) && typeof value === 'string' && value.length <= MAX_ANNOTATION_VALUE;
}

/** The parts joined by commas, leaving out empty ones. */
function joined(parts: readonly string[]): string {
  let out = '';
  for (const p of parts) if (p !== '') out += out === '' ? p : `,${p}`;
  return out;
}

/** The length `joined(parts)` would have, without building it. */
function joinedLength(parts: readonly string[]): number {
  let n = 0;
  let count = 0;
  for (const p of parts) {
    if (p === '') continue;
    n += p.length;
    count++;
  }
  return count === 0 ? 0 : n + count - 1;
}

export interface CompactObject {
  json: string;
  /** True when annotations or labels were cut to stay near the target size. */
  trimmed: boolean;
}

const TRIMMED_MARK = ',"trimmed":true';

/**
 * The compact form of `raw`, an object of `kind` in `group`, as JSON text. List items of built-in
 * kinds carry no `apiVersion` or `kind`; `apiVersion` fills them in.
 *
 * It is built from parts serialized once each, and the size of each candidate (all annotations, the
 * essential ones, fewer labels) is summed from their lengths, so only the form chosen is ever
 * assembled: this runs for every event.
 */
export function compactObject(raw: unknown, kind: string, group: string, apiVersion = ''): CompactObject {
  const o = obj(raw);
  const meta = obj(o.metadata);
  const head = `{"apiVersion":${JSON.stringify(o.apiVersion ?? apiVersion)},"kind":${JSON.stringify(o.kind ?? kind)},"metadata":{`;
  const core = coreMembers(meta);
  const labelMap = obj(meta.labels);
  const annotationMap = obj(meta.annotations);
  let allKept = true;
  for (const k in annotationMap) {
    if (!keptAnnotation(k, annotationMap[k]!)) {
      allKept = false;
      break;
    }
  }
  const annotations = allKept ? undefined : Object.entries(annotationMap).filter((e): e is [string, string] => keptAnnotation(e[0], e[1]));
  const owners = arr(meta.ownerReferences).map((r) => pick(obj(r), ['kind', 'name', 'controller']));
  const ownersPart = owners.length === 0 ? '' : `"ownerReferences":${JSON.stringify(owners)}`;
  const bodyJson = JSON.stringify(summary(kind, group, o));
  // `,"spec":...,"status":...` (the summary's members), or nothing for an empty summary.
  const bodyPart = bodyJson.length > 2 ? `,${bodyJson.slice(1, -1)}` : '';
  // head + metadata members + '}' + body + (trimmed mark) + '}'
  const sizeOf = (metaParts: readonly string[], trimmed: boolean): number =>
    head.length + joinedLength(metaParts) + 1 + bodyPart.length + (trimmed ? TRIMMED_MARK.length : 0) + 1;
  const assemble = (metaParts: readonly string[], trimmed: boolean): string => `${head}${joined(metaParts)}}${bodyPart}${trimmed ? TRIMMED_MARK : ''}}`;

  const allLabels = wholeMapMember('labels', labelMap);
  const allAnnotations = annotations === undefined ? wholeMapMember('annotations', annotationMap) : mapMember('annotations', annotations);
  const full = [core, allLabels, allAnnotations, ownersPart];
  if (sizeOf(full, false) <= COMPACT_TARGET_BYTES) return { json: assemble(full, false), trimmed: false };
  const essential = mapMember('annotations', (annotations ?? (Object.entries(annotationMap) as [string, string][])).filter(([k]) => ESSENTIAL_ANNOTATION.test(k)));
  const fewer = [core, allLabels, essential, ownersPart];
  const labels = Object.entries(labelMap);
  if (sizeOf(fewer, true) <= COMPACT_TARGET_BYTES || labels.length <= 8) return { json: assemble(fewer, true), trimmed: true };
  return { json: assemble([core, mapMember('labels', labels.slice(0, 8)), essential, ownersPart], true), trimmed: true };
}

/** The compact form of a synthetic resource: only its existence is known. */
export function syntheticObject(apiVersion: string, kind: string, name: string, spec?: Obj): string {
  return JSON.stringify({ apiVersion, kind, metadata: { name }, ...(spec === undefined ? {} : { spec }), synthetic: true });
}

