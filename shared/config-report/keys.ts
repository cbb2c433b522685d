/** The keys a configuration schema knows: every key path, unknown keys of a file, the closest known key. */
import type * as v from 'valibot';
import { formatPath, type ConfigWarning, type PathKey, type UnknownKeyProblem } from './problems.ts';

/** A schema as the key walks see it: the entries, items and wrapped schema valibot keeps on it. */
export type WalkedSchema = v.GenericSchema & {
  wrapped?: WalkedSchema;
  entries?: Record<string, WalkedSchema>;
  item?: WalkedSchema;
};

/** Strips optional/nullable wrappers; a piped schema already carries the type and entries of its base. */
export function unwrapSchema(schema: WalkedSchema): WalkedSchema {
  let s = schema;
  while (s.wrapped !== undefined) s = s.wrapped;
  return s;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Levenshtein distance between two strings. */
export function editDistance(x: string, y: string): number {
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[y.length]!;
}

/** The known key nearest to `key`, ignoring letter case first (`kubeconfigfile`), then with it. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const score = (candidate: string) =>
    editDistance(key.toLowerCase(), candidate.toLowerCase()) * 1000 + editDistance(key, candidate);
  return [...known].sort((a, b) => score(a) - score(b))[0];
}

/**
 * Keys of the file the schema does not know. Plain objects in the schema drop unknown keys, so without
 * this walk a misspelt key would silently fall back to its default.
 */
export function unknownKeys(schema: v.GenericSchema, input: unknown): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  const walk = (node: WalkedSchema, value: unknown, keys: PathKey[]): void => {
    const s = unwrapSchema(node);
    if (s.type === 'object' && s.entries !== undefined && isMapping(value)) {
      const entries = s.entries;
      const known = Object.keys(entries);
      for (const [key, child] of Object.entries(value)) {
        const childSchema = entries[key];
        if (childSchema !== undefined) {
          walk(childSchema, child, [...keys, key]);
          continue;
        }
        const near = closestKey(key, known);
        out.push({
          path: formatPath([...keys, key]),
          message:
            near === undefined
              ? 'unknown key, ignored'
              : `unknown key, ignored; the closest known key is ${formatPath([...keys, near])}`,
        });
      }
    } else if (s.type === 'array' && s.item !== undefined && Array.isArray(value)) {
      const item = s.item;
      value.forEach((element, index) => walk(item, element, [...keys, index]));
    }
  };
  walk(schema as WalkedSchema, input, []);
  return out;
}

/** The keys of the mapping the schema expects at `keys`, or nothing when the path leads elsewhere. */
export function knownKeysAt(schema: v.GenericSchema, keys: readonly PathKey[]): string[] | undefined {
  let s: WalkedSchema | undefined = unwrapSchema(schema as WalkedSchema);
  for (const key of keys) {
    const next: WalkedSchema | undefined = typeof key === 'number' ? s.item : s.entries?.[key];
    if (next === undefined) return undefined;
    s = unwrapSchema(next);
  }
  return s.entries === undefined ? undefined : Object.keys(s.entries);
}

/** How a key that a strict mapping of `schema` refuses is reported: refused, with the closest known key. */
export function refusedKeyProblem(schema: v.GenericSchema): UnknownKeyProblem {
  return (keys, key) => {
    const near = closestKey(key, knownKeysAt(schema, keys) ?? []);
    return {
      path: formatPath([...keys, key]),
      message: near === undefined ? 'unknown key, refused' : `unknown key, refused; the closest known key is ${formatPath([...keys, near])}`,
    };
  };
}
