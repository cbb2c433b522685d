import { clone, deepEqual, isJsonObject, type JsonObject, type JsonValue, type KubeObject } from './objects.ts';
import { mergeKeyFor } from './list-keys.ts';

/**
 * Field ownership for server-side apply, simplified but honest: an object's fields are the leaf paths
 * of its JSON (`f:` segments for map keys, `k:{"name":..}` for items of the keyed lists of
 * `list-keys.ts`, other lists and `selector` maps atomic), recorded per manager in `managedFields`
 * as FieldsV1 tries. Apply merges into the live object, reports a conflict when another manager owns
 * a leaf whose value it changes, and removes the leaves a manager stopped applying that nobody else
 * owns. Other writes take ownership of the leaves they change.
 */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

const SEP = '\u0000';
/** Metadata fields the server owns; they never appear in a field set. */
const SERVER_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']);

export type FieldSet = Set<string>;

export interface FieldSetOptions {
  keyedLists: boolean;
  /** Top-level fields left out, e.g. `status` for writes to a main resource that has a status subresource. */
  skip: readonly string[];
}

export function fieldSetOf(obj: JsonObject, opts: FieldSetOptions): FieldSet {
  const out: FieldSet = new Set();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || opts.skip.includes(k)) continue;
    if (k === 'metadata' && isJsonObject(v)) {
      const meta: JsonObject = {};
      for (const [mk, mv] of Object.entries(v)) if (!SERVER_META.has(mk)) meta[mk] = mv;
      if (Object.keys(meta).length > 0) walk(meta, ['f:metadata'], opts.keyedLists, out);
      continue;
    }
    walkValue(k, v, [], opts.keyedLists, out);
  }
  return out;
}

function walk(obj: JsonObject, prefix: string[], keyed: boolean, out: FieldSet): void {
  for (const [k, v] of Object.entries(obj)) walkValue(k, v, prefix, keyed, out);
}

function walkValue(k: string, v: JsonValue, prefix: string[], keyed: boolean, out: FieldSet): void {
  const path = [...prefix, `f:${k}`];
  if (isJsonObject(v) && Object.keys(v).length > 0 && k !== 'selector') {
    walk(v, path, keyed, out);
    return;
  }
  const key = keyed && Array.isArray(v) ? listKey(k, v) : undefined;
  if (key !== undefined && Array.isArray(v)) {
    for (const item of v) {
      if (!isJsonObject(item)) continue;
      const itemPath = [...path, itemSegment(key, item)];
      out.add([...itemPath, '.'].join(SEP));
      walk(item, itemPath, keyed, out);
    }
    return;
  }
  out.add(path.join(SEP));
}

function listKey(field: string, items: JsonValue[]): string | undefined {
  const key = mergeKeyFor(field, items);
  if (key === undefined) return undefined;
  return items.every((i) => isJsonObject(i) && i[key] !== undefined) ? key : undefined;
}

function itemSegment(key: string, item: JsonObject): string {
  return `k:${JSON.stringify({ [key]: item[key] ?? null })}`;
}

/** The value at a field path, `found: false` where the object has nothing there. */
function valueAt(obj: JsonValue, path: string): { found: boolean; value: JsonValue } {
  let cur: JsonValue = obj;
  for (const seg of path.split(SEP)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) {
      if (!isJsonObject(cur) || !(seg.slice(2) in cur)) return { found: false, value: null };
      cur = cur[seg.slice(2)] ?? null;
    } else if (seg.startsWith('k:')) {
      const key = JSON.parse(seg.slice(2)) as JsonObject;
      if (!Array.isArray(cur)) return { found: false, value: null };
      const item: JsonValue | undefined = cur.find((i) => isJsonObject(i) && Object.entries(key).every(([kk, kv]) => deepEqual(i[kk], kv)));
      if (item === undefined) return { found: false, value: null };
      cur = item;
    }
  }
  return { found: true, value: cur };
}

function deleteAt(obj: JsonObject, path: string): void {
  const segs = path.split(SEP);
  const last = segs.at(-1);
  const parentSegs = last === '.' ? segs.slice(0, -2) : segs.slice(0, -1);
  const parent = valueAt(obj, parentSegs.join(SEP));
  if (!parent.found) return;
  if (last === '.') {
    const itemSeg = segs.at(-2) ?? '';
    const key = JSON.parse(itemSeg.slice(2)) as JsonObject;
    if (!Array.isArray(parent.value)) return;
    const i = parent.value.findIndex((it) => isJsonObject(it) && Object.entries(key).every(([kk, kv]) => deepEqual(it[kk], kv)));
    if (i >= 0) parent.value.splice(i, 1);
  } else if (last !== undefined && last.startsWith('f:') && isJsonObject(parent.value)) {
    delete parent.value[last.slice(2)];
  }
}

export function toFieldsV1(set: FieldSet): JsonObject {
  const root: JsonObject = {};
  for (const path of [...set].sort()) {
    let node = root;
    for (const seg of path.split(SEP)) {
      const next = node[seg];
      if (isJsonObject(next)) node = next;
      else {
        const created: JsonObject = {};
        node[seg] = created;
        node = created;
      }
    }
  }
  return root;
}

export function fromFieldsV1(trie: JsonValue | undefined): FieldSet {
  const out: FieldSet = new Set();
  const visit = (node: JsonObject, prefix: string[]): void => {
    for (const [seg, child] of Object.entries(node)) {
      const path = [...prefix, seg];
      if (isJsonObject(child) && Object.keys(child).length > 0) visit(child, path);
      else out.add(path.join(SEP));
    }
  };
  if (isJsonObject(trie)) visit(trie, []);
  return out;
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(b + SEP) || b.startsWith(a + SEP);
}

function ownedBy(set: FieldSet, path: string): boolean {
  if (set.has(path)) return true;
  for (const p of set) if (overlaps(p, path)) return true;
  return false;
}

/** `.spec.template.spec.containers[name="app"].image`, the way conflicts name a field. */
export function describePath(path: string): string {
  let out = '';
  for (const seg of path.split(SEP)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) out += `.${seg.slice(2)}`;
    else if (seg.startsWith('k:')) {
      const key = JSON.parse(seg.slice(2)) as JsonObject;
      out += `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
    }
  }
  return out;
}

export function readEntries(obj: KubeObject | undefined): ManagedFieldsEntry[] {
  const raw = obj?.metadata.managedFields;
  if (!Array.isArray(raw)) return [];
  return raw.filter(isJsonObject).map((e) => ({
    manager: String(e.manager ?? ''),
    operation: e.operation === 'Apply' ? 'Apply' : 'Update',
    apiVersion: String(e.apiVersion ?? ''),
    time: String(e.time ?? ''),
    fieldsType: 'FieldsV1',
    fieldsV1: isJsonObject(e.fieldsV1) ? e.fieldsV1 : {},
    ...(typeof e.subresource === 'string' && e.subresource !== '' ? { subresource: e.subresource } : {}),
  }));
}

function entryJson(e: ManagedFieldsEntry): JsonObject {
  const out: JsonObject = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, time: e.time, fieldsType: e.fieldsType, fieldsV1: e.fieldsV1 };
  if (e.subresource !== undefined) out.subresource = e.subresource;
  return out;
}

function sameOwner(e: ManagedFieldsEntry, manager: string, operation: string, subresource: string | undefined): boolean {
  return e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? '');
}

/** Merges an applied configuration into the live object; keyed lists merge by key, the rest replaces. */
function mergeApplied(live: JsonValue, applied: JsonValue, field: string, keyed: boolean): JsonValue {
  if (isJsonObject(applied) && isJsonObject(live) && field !== 'selector') {
    const out: JsonObject = { ...live };
    for (const [k, v] of Object.entries(applied)) out[k] = mergeApplied(live[k] ?? null, v, k, keyed);
    return out;
  }
  if (keyed && Array.isArray(applied) && Array.isArray(live)) {
    const key = listKey(field, [...applied, ...live]);
    if (key !== undefined) {
      const out = [...live];
      for (const item of applied) {
        if (!isJsonObject(item)) continue;
        const i = out.findIndex((x) => isJsonObject(x) && deepEqual(x[key], item[key]));
        if (i >= 0) out[i] = mergeApplied(out[i] ?? null, item, '', keyed);
        else out.push(clone(item));
      }
      return out;
    }
  }
  return clone(applied);
}

export interface ApplyConflict {
  manager: string;
  operation: string;
  apiVersion: string;
  path: string;
}

export type ApplyResult = { ok: true; object: KubeObject } | { ok: false; conflicts: ApplyConflict[] };

export interface ApplyInput {
  live: KubeObject | undefined;
  applied: KubeObject;
  manager: string;
  apiVersion: string;
  force: boolean;
  now: string;
  opts: FieldSetOptions;
}

export function apply(input: ApplyInput): ApplyResult {
  const { live, applied, manager, opts } = input;
  const appliedSet = fieldSetOf(applied as unknown as JsonObject, opts);
  const entries = readEntries(live);
  const mine = entries.find((e) => sameOwner(e, manager, 'Apply', undefined));
  const previous = mine === undefined ? new Set<string>() : fromFieldsV1(mine.fieldsV1);
  const others = entries.filter((e) => e !== mine).map((e) => ({ entry: e, set: fromFieldsV1(e.fieldsV1) }));

  const conflicts: ApplyConflict[] = [];
  const stolen = new Set<string>();
  if (live !== undefined) {
    for (const path of appliedSet) {
      if (path.endsWith(SEP + '.')) continue;
      const before = valueAt(live as unknown as JsonObject, path);
      if (!before.found || deepEqual(before.value, valueAt(applied as unknown as JsonObject, path).value)) continue;
      for (const o of others) {
        if (ownedBy(o.set, path)) {
          conflicts.push({ manager: o.entry.manager, operation: o.entry.operation, apiVersion: o.entry.apiVersion, path: describePath(path) });
          stolen.add(path);
        }
      }
    }
  }
  if (conflicts.length > 0 && !input.force) return { ok: false, conflicts };

  const base: JsonObject = live === undefined ? {} : (clone(live) as unknown as JsonObject);
  const appliedBody: JsonObject = { ...(applied as unknown as JsonObject) };
  for (const k of opts.skip) delete appliedBody[k];
  const merged = mergeApplied(base, appliedBody, '', opts.keyedLists) as JsonObject;

  // Leaves this manager stopped applying go away unless someone else still owns them.
  const dropped = [...previous].filter((p) => !appliedSet.has(p) && !others.some((o) => ownedBy(o.set, p)));
  for (const p of dropped.sort((a, b) => b.length - a.length)) deleteAt(merged, p);

  const next: ManagedFieldsEntry[] = [];
  for (const o of others) {
    const remaining = new Set([...o.set].filter((p) => ![...stolen].some((s) => overlaps(s, p))));
    if (remaining.size > 0) next.push({ ...o.entry, fieldsV1: toFieldsV1(remaining) });
  }
  next.push({ manager, operation: 'Apply', apiVersion: input.apiVersion, time: input.now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(appliedSet) });
  const object = merged as unknown as KubeObject;
  object.metadata = { ...(isJsonObject(merged.metadata) ? (merged.metadata as KubeObject['metadata']) : {}), managedFields: next.map(entryJson) };
  return { ok: true, object };
}

export interface UpdateInput {
  old: KubeObject | undefined;
  next: KubeObject;
  manager: string;
  apiVersion: string;
  now: string;
  subresource?: string;
  opts: FieldSetOptions;
}

/** Records a non-apply write: the manager owns what it changed, others lose what was changed or removed. */
export function recordUpdate(input: UpdateInput): void {
  const { old, next, opts } = input;
  const newSet = fieldSetOf(next as unknown as JsonObject, opts);
  const oldSet = old === undefined ? new Set<string>() : fieldSetOf(old as unknown as JsonObject, opts);
  const changed = new Set<string>();
  for (const p of newSet) {
    if (p.endsWith(SEP + '.') && oldSet.has(p)) continue;
    const before = old === undefined ? { found: false, value: null } : valueAt(old as unknown as JsonObject, p);
    if (!before.found || !deepEqual(before.value, valueAt(next as unknown as JsonObject, p).value)) changed.add(p);
  }
  const removed = [...oldSet].filter((p) => !newSet.has(p));
  const entries = readEntries(old).length > 0 ? readEntries(old) : readEntries(next);
  const out: ManagedFieldsEntry[] = [];
  let mineSet = new Set<string>();
  for (const e of entries) {
    const set = fromFieldsV1(e.fieldsV1);
    if (sameOwner(e, input.manager, 'Update', input.subresource)) {
      mineSet = set;
      continue;
    }
    const remaining = new Set([...set].filter((p) => !changed.has(p) && !removed.some((r) => overlaps(r, p))));
    if (remaining.size > 0) out.push({ ...e, fieldsV1: toFieldsV1(remaining) });
  }
  for (const p of changed) mineSet.add(p);
  for (const p of removed) mineSet.delete(p);
  if (mineSet.size > 0) {
    const entry: ManagedFieldsEntry = { manager: input.manager, operation: 'Update', apiVersion: input.apiVersion, time: input.now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(mineSet) };
    if (input.subresource !== undefined) entry.subresource = input.subresource;
    out.push(entry);
  }
  // An empty list is left out, as Go's omitempty does (an object created with nothing but its name).
  if (out.length > 0) next.metadata.managedFields = out.map(entryJson);
  else delete next.metadata.managedFields;
}

/**
 * How kube-apiserver names the other manager in a conflict: an applier by name alone (its entry is
 * the same whatever version it applied with), an updater with the version it wrote.
 */
export function conflictingManager(c: ApplyConflict): string {
  return c.operation === 'Apply' ? `"${c.manager}"` : `"${c.manager}" using ${c.apiVersion}`;
}

export function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const byManager = new Map<string, ApplyConflict[]>();
  for (const c of conflicts) {
    const k = conflictingManager(c);
    byManager.set(k, [...(byManager.get(k) ?? []), c]);
  }
  const n = conflicts.length;
  const parts = [...byManager].map(([who, cs]) =>
    cs.length === 1 ? `conflict with ${who}: ${cs[0]?.path ?? ''}` : `conflicts with ${who}:\n${cs.map((c) => `- ${c.path}`).join('\n')}`,
  );
  return `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`;
}
