import { randomBytes, randomUUID } from 'node:crypto';

/** JSON values as they travel in request and response bodies. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: JsonObject[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A Kubernetes object: anything with `kind`, `apiVersion` and `metadata`. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: JsonValue | ObjectMeta | undefined;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A deep copy of JSON data (a JSON round trip is several times faster than structuredClone here). */
export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}

/** RFC 3339 with second precision, the form of `creationTimestamp`. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function newUid(): string {
  return randomUUID();
}

const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The five random characters kube-apiserver appends to `generateName`. */
export function generateNameSuffix(): string {
  const bytes = randomBytes(5);
  let out = '';
  for (const b of bytes) out += NAME_SUFFIX_ALPHABET[b % NAME_SUFFIX_ALPHABET.length];
  return out;
}

const META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

function ordered<T extends Record<string, unknown>>(source: T, first: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const k of first) if (source[k] !== undefined) out[k] = source[k];
  for (const [k, v] of Object.entries(source)) if (!first.includes(k) && v !== undefined) out[k] = v;
  return out as T;
}

/** Puts keys in the order kube-apiserver writes them (`kind`, `apiVersion`, `metadata` first). */
export function canonical(obj: KubeObject): KubeObject {
  const withMeta = { ...obj, metadata: ordered(obj.metadata, META_ORDER) };
  return ordered(withMeta, ['kind', 'apiVersion', 'metadata']);
}

/**
 * JSON of values that can no longer change (deep-frozen by `frozenJson`). Serializing a stored
 * object is most of the cost of a write; a writer that changes a few fields of a large object over
 * and over (a load generator) freezes the parts it keeps, and their JSON is then made once.
 */
const knownJson = new WeakMap<object, string>();

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/** Freezes `value` deeply and remembers its JSON, so `canonicalJson` reuses it wherever it appears. */
export function frozenJson<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !knownJson.has(value)) {
    deepFreeze(value);
    knownJson.set(value, JSON.stringify(value));
  }
  return value;
}

/**
 * Appends the JSON of `value` to `parts` (nothing when JSON.stringify would give undefined), reusing
 * the remembered JSON of frozen parts down to `depth` levels. Parts are joined once at the end: the
 * stored JSON is then a flat string, not a rope every reader has to flatten.
 */
function writeJson(parts: string[], value: unknown, depth: number): void {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    if (s !== undefined) parts.push(s);
    return;
  }
  const known = knownJson.get(value);
  if (known !== undefined) parts.push(known);
  else if (depth === 0 || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    const s = JSON.stringify(value);
    if (s !== undefined) parts.push(s);
  } else writeObject(parts, value as Record<string, unknown>, Object.keys(value), depth - 1);
}

/** Appends `{"key":value,...}`; `write(key)` appends the value, or nothing to leave the member out as JSON does. */
function writeMembers(parts: string[], keys: readonly string[], write: (key: string) => void): void {
  parts.push('{');
  let first = true;
  for (const k of keys) {
    const before = parts.length;
    parts.push(first ? '' : ',', JSON.stringify(k), ':');
    write(k);
    if (parts.length === before + 3) parts.length = before;
    else first = false;
  }
  parts.push('}');
}

function writeObject(parts: string[], source: Record<string, unknown>, keys: readonly string[], depth: number): void {
  writeMembers(parts, keys, (k) => writeJson(parts, source[k], depth));
}

function canonicalKeys(source: Record<string, unknown>, first: readonly string[]): string[] {
  const keys = first.filter((k) => source[k] !== undefined);
  for (const k of Object.keys(source)) if (!first.includes(k)) keys.push(k);
  return keys;
}

/**
 * `JSON.stringify(canonical(obj))`, the stored form of an object, made without copying it and
 * reusing the JSON of parts frozen by `frozenJson`.
 */
export function canonicalJson(obj: KubeObject): string {
  const top = obj as unknown as Record<string, unknown>;
  const parts: string[] = [];
  writeMembers(parts, canonicalKeys(top, ['kind', 'apiVersion', 'metadata']), (k) => {
    const v = top[k];
    if (k === 'metadata' && isJsonObject(v) && !knownJson.has(v)) writeObject(parts, v, canonicalKeys(v, META_ORDER), 0);
    else writeJson(parts, v, 1);
  });
  return parts.join('');
}

/** Reads a dotted path such as `.spec.replicas`. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/^\./, '').split('.')) {
    if (!isJsonObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Writes a dotted path, creating intermediate objects. */
export function setPath(obj: JsonObject, path: string, value: JsonValue): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur: JsonObject = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (isJsonObject(next)) cur = next;
    else {
      const created: JsonObject = {};
      cur[part] = created;
      cur = created;
    }
  }
  const last = parts.at(-1);
  if (last !== undefined) cur[last] = value;
}
