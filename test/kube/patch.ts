import { clone, deepEqual, isJsonObject, type JsonObject, type JsonValue } from './objects.ts';
import { mergeKeyFor } from './list-keys.ts';
import { badRequest, failure, StatusError } from './status.ts';

/** JSON merge patch (RFC 7386): objects merge, `null` removes, everything else replaces. */
export function mergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return clone(patch);
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

/**
 * Strategic merge patch for built-in kinds: a merge patch in which the lists of `list-keys.ts` merge
 * item by item on their key, with the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/` and
 * `$setElementOrder/` directives.
 */
export function strategicMergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return clone(patch);
  const directive = patch.$patch;
  if (directive === 'delete') return null;
  const base: JsonObject = isJsonObject(target) ? { ...target } : {};
  if (directive === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return clone(rest);
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const current = base[field];
      if (Array.isArray(current) && Array.isArray(v)) base[field] = current.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    if (v === null) {
      delete base[k];
      continue;
    }
    const current = base[k];
    if (Array.isArray(v)) base[k] = mergeList(k, Array.isArray(current) ? current : [], v);
    else if (isJsonObject(v)) {
      const merged = strategicMergePatch(current ?? null, v);
      if (merged === null) delete base[k];
      else base[k] = merged;
    } else base[k] = v;
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    for (const key of Object.keys(base)) if (!retain.includes(key)) delete base[key];
  }
  return base;
}

function mergeList(field: string, current: JsonValue[], patch: JsonValue[]): JsonValue[] {
  if (patch.some((p) => isJsonObject(p) && p.$patch === 'replace' && Object.keys(p).length === 1)) {
    return clone(patch.filter((p) => !(isJsonObject(p) && p.$patch === 'replace')));
  }
  const key = mergeKeyFor(field, [...patch, ...current]);
  if (key === undefined) return clone(patch);
  const out = current.map((x) => x);
  for (const item of patch) {
    if (!isJsonObject(item)) continue;
    const i = out.findIndex((x) => isJsonObject(x) && deepEqual(x[key], item[key]));
    if (item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = strategicMergePatch(out[i] ?? null, item);
    else out.push(strategicMergePatch(null, item));
  }
  return out;
}

function patchFailed(message: string): StatusError {
  return new StatusError(
    failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {
      causes: [{ reason: 'UnexpectedServerResponse', message }],
    }),
  );
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: JsonValue;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`invalid JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parseOps(patch: JsonValue): JsonPatchOp[] {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return patch.map((p) => {
    if (!isJsonObject(p) || typeof p.op !== 'string' || typeof p.path !== 'string') {
      throw badRequest('the JSON patch operation must be an object with "op" and "path"');
    }
    const op: JsonPatchOp = { op: p.op, path: p.path };
    if (typeof p.from === 'string') op.from = p.from;
    if ('value' in p) op.value = p.value as JsonValue;
    return op;
  });
}

type Container = JsonObject | JsonValue[];

function resolveParent(doc: JsonValue, parts: string[], pointer: string): { parent: Container; last: string } {
  let cur: JsonValue = doc;
  for (const part of parts.slice(0, -1)) {
    const next: JsonValue | undefined = Array.isArray(cur) ? cur[Number(part)] : isJsonObject(cur) ? cur[part] : undefined;
    if (next === undefined || next === null || typeof next !== 'object') {
      throw patchFailed(`doc is missing path: "${pointer}": missing value`);
    }
    cur = next;
  }
  if (cur === null || typeof cur !== 'object') throw patchFailed(`doc is missing path: "${pointer}": missing value`);
  return { parent: cur, last: parts.at(-1) ?? '' };
}

function getAt(doc: JsonValue, pointer: string): JsonValue {
  const parts = decodePointer(pointer);
  if (parts.length === 0) return doc;
  const { parent, last } = resolveParent(doc, parts, pointer);
  const v = Array.isArray(parent) ? parent[Number(last)] : parent[last];
  if (v === undefined) throw patchFailed(`doc is missing key: ${pointer}: missing value`);
  return v;
}

function arrayIndex(arr: JsonValue[], token: string, forInsert: boolean, pointer: string): number {
  if (forInsert && token === '-') return arr.length;
  const i = Number(token);
  const max = forInsert ? arr.length : arr.length - 1;
  if (!/^\d+$/.test(token) || i > max) throw patchFailed(`Unable to access invalid index: ${token}: invalid index referenced: ${pointer}`);
  return i;
}

function removeAt(doc: JsonValue, pointer: string): JsonValue {
  const { parent, last } = resolveParent(doc, decodePointer(pointer), pointer);
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, false, pointer), 1);
    return removed ?? null;
  }
  if (!(last in parent)) throw patchFailed(`Unable to remove nonexistent key: ${last}: missing value`);
  const v = parent[last] ?? null;
  delete parent[last];
  return v;
}

function addAt(doc: JsonValue, pointer: string, value: JsonValue, replace: boolean): JsonValue {
  const parts = decodePointer(pointer);
  if (parts.length === 0) return value;
  const { parent, last } = resolveParent(doc, parts, pointer);
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, last, !replace, pointer);
    parent.splice(i, replace ? 1 : 0, value);
  } else {
    if (replace && !(last in parent)) throw patchFailed(`replace operation does not apply: doc is missing key: ${pointer}: missing value`);
    parent[last] = value;
  }
  return doc;
}

/** JSON patch (RFC 6902) applied to a copy of `doc`. */
export function jsonPatch(doc: JsonValue, patch: JsonValue): JsonValue {
  let out = clone(doc);
  for (const op of parseOps(patch)) {
    switch (op.op) {
      case 'add':
        out = addAt(out, op.path, clone(op.value ?? null), false);
        break;
      case 'replace':
        out = addAt(out, op.path, clone(op.value ?? null), true);
        break;
      case 'remove':
        removeAt(out, op.path);
        break;
      case 'move':
      case 'copy': {
        if (op.from === undefined) throw badRequest(`"from" is required for ${op.op}`);
        const value = op.op === 'move' ? removeAt(out, op.from) : clone(getAt(out, op.from));
        out = addAt(out, op.path, value, false);
        break;
      }
      case 'test':
        if (!deepEqual(getAt(out, op.path), op.value ?? null)) throw patchFailed(`testing value ${op.path} failed: test failed`);
        break;
      default:
        throw badRequest(`Unexpected kind: ${op.op}`);
    }
  }
  return out;
}
