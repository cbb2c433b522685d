/**
 * fast-check arbitraries for hostile input to an HTTP API: values that follow a JSON Schema (the
 * OpenAPI document's request schemas), and mutations of them, of the JSON text, of path segments and
 * of query values. Everything here is generic; the names a suite cares about (account names, zones)
 * come in as `hints` keyed by property or parameter name.
 */
import fc from 'fast-check';
import { resolveRef, type JsonSchema } from './api-operations.ts';

/** Arbitraries to use (alongside the schema's own) for properties or parameters of these names. */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

const MAX_GENERATED_STRING = 40;
const MAX_GENERATED_ITEMS = 3;

/** Values that satisfy `schema` (as far as JSON Schema says; checks it cannot express may still fail). */
export function schemaValue(document: Record<string, unknown>, schema: JsonSchema, hints: Hints = {}, key?: string, depth = 0): fc.Arbitrary<unknown> {
  const own = ownSchemaValue(document, resolveRef(document, schema), hints, depth);
  const hint = key === undefined ? undefined : hints[key];
  return hint === undefined ? own : fc.oneof({ weight: 6, arbitrary: hint }, { weight: 1, arbitrary: own });
}

function ownSchemaValue(document: Record<string, unknown>, schema: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s) => schemaValue(document, s, hints, undefined, depth + 1)));
  const type = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  if (type.length > 1) return fc.oneof(...type.map((t) => ownSchemaValue(document, { ...schema, type: t }, hints, depth)));
  const num = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  switch (type[0]) {
    case 'string': {
      const minLength = num('minLength') ?? 0;
      const maxLength = Math.min(num('maxLength') ?? MAX_GENERATED_STRING, Math.max(minLength, MAX_GENERATED_STRING));
      if (typeof schema.pattern === 'string') {
        return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= (num('maxLength') ?? Infinity));
      }
      return fc.string({ minLength, maxLength });
    }
    case 'integer':
      return fc.integer({ min: num('minimum') ?? -1_000_000, max: num('maximum') ?? 1_000_000 });
    case 'number':
      return fc.double({ min: num('minimum') ?? -1e9, max: num('maximum') ?? 1e9, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = num('minItems') ?? 0;
      const maxLength = Math.min(num('maxItems') ?? MAX_GENERATED_ITEMS, minLength + MAX_GENERATED_ITEMS);
      const items = (schema.items as JsonSchema | undefined) ?? {};
      return depth > 6 ? fc.constant([]) : fc.array(schemaValue(document, items, hints, undefined, depth + 1), { minLength, maxLength });
    }
    case 'object': {
      const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
      const required = (schema.required as string[] | undefined) ?? [];
      if (depth > 6) return fc.constant({});
      // Optional properties are left out two times in three, so that alternatives (two spellings of
      // one key) rarely come together and most generated values stay valid.
      const entries = Object.entries(properties).map(([name, s]) => {
        const value = schemaValue(document, s, hints, name, depth + 1).map((v): [string, unknown] => [name, v]);
        return required.includes(name) ? value : fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });
      });
      return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs.filter((p) => p !== undefined)));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---- mutations of JSON values ----

/** Object keys that have meant trouble for code that copies JSON into objects. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

/** Nested arrays `depth` deep: `[[[...]]]`. */
export function deeplyNested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** Strings that break naive code: unicode of every kind, lone surrogates, control characters, huge. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff\ud800', '\u202e', '\ufeff', 'e\u0301', '🧨💥', '../..', '%00', '${jndi:x}', '<script>', "'; --", 'null', 'NaN', '\r\n\r\n'),
  fc.integer({ min: 254, max: 70_000 }).map((n) => 'x'.repeat(n)),
);

/** JSON values of every type and a few extreme sizes. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, true, false, null, [], {}) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 2_000 }).map(deeplyNested) },
  { weight: 1, arbitrary: fc.integer({ min: 501, max: 5_000 }).map((n) => Array.from({ length: n }, (_, i) => ({ name: `n${i}` }))) },
  // Many elements that are each wrong: every one is a problem to report.
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => new Array<number>(n).fill(0)) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`unknown${i}`, i]))) },
);

/** Every place in a JSON value: the path of keys and indexes leading to it. */
function places(value: unknown, path: (string | number)[] = [], out: (string | number)[][] = [], budget = { left: 200 }): (string | number)[][] {
  if (budget.left-- <= 0) return out;
  out.push(path);
  if (Array.isArray(value)) value.slice(0, 20).forEach((v, i) => places(v, [...path, i], out, budget));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) places(v, [...path, k], out, budget);
  return out;
}

/** A copy of `value` with `at` replaced by `change(old)`; own properties are defined, never assigned, so `__proto__` stays a key. */
function replaceAt(value: unknown, at: readonly (string | number)[], change: (old: unknown) => unknown | typeof REMOVE): unknown {
  if (at.length === 0) return change(value);
  const [head, ...rest] = at;
  if (Array.isArray(value)) {
    const copy = [...value];
    const next = replaceAt(copy[head as number], rest, change);
    if (next === REMOVE) copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k !== head) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  const next = replaceAt((value as Record<string, unknown>)[head as string], rest, change);
  if (next !== REMOVE) Object.defineProperty(copy, head as string, { value: next, enumerable: true, writable: true, configurable: true });
  return copy;
}

const REMOVE = Symbol('remove');

type Mutation =
  | { kind: 'replace'; pick: number; value: unknown }
  | { kind: 'add-key'; pick: number; key: string; value: unknown }
  | { kind: 'remove'; pick: number }
  | { kind: 'wrap'; pick: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant('add-key' as const), pick: fc.nat(), key: fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 12 })), value: hostileValue }),
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('wrap' as const), pick: fc.nat() }),
);

function applyMutation(value: unknown, m: Mutation): unknown {
  const all = places(value);
  const at = all[m.pick % all.length] as (string | number)[];
  switch (m.kind) {
    case 'replace':
      return replaceAt(value, at, () => m.value);
    case 'remove':
      return at.length === 0 ? value : replaceAt(value, at, () => REMOVE);
    case 'wrap':
      return replaceAt(value, at, (old) => [old]);
    case 'add-key':
      return replaceAt(value, at, (old) => {
        if (old === null || typeof old !== 'object' || Array.isArray(old)) return old;
        const copy: Record<string, unknown> = { ...(old as Record<string, unknown>) };
        Object.defineProperty(copy, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        return copy;
      });
  }
}

/** `value` with up to three mutations (none, sometimes: valid requests must get through too). */
export function mutatedValue(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(valid, fc.oneof({ weight: 1, arbitrary: fc.constant([] as Mutation[]) }, { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }))
    .map(([v, ms]) => ms.reduce(applyMutation, v));
}

// ---- mutations of the JSON text ----

/** A request body as sent: text, or raw bytes (invalid UTF-8). */
export type RawBody = string | Uint8Array;

const INVALID_UTF8: Uint8Array[] = [
  Uint8Array.of(0xff, 0xfe),
  Uint8Array.of(0x5b, 0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d, 0x5d), // [{"name":"<overlong />"}]
  Uint8Array.of(0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d), // ["<encoded surrogate>"]
  Uint8Array.of(0x5b, 0x22, 0xe0, 0xa4, 0x22, 0x5d), // ["<truncated sequence>"]
];

/** The JSON text of `value`, often spoilt: duplicate keys, cut short, padded, a BOM, not JSON at all, invalid UTF-8, over a size. */
export function bodyText(value: fc.Arbitrary<unknown>, oversize: number): fc.Arbitrary<RawBody> {
  const text = value.map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { weight: 20, arbitrary: text },
    {
      weight: 2,
      arbitrary: fc.tuple(text, fc.jsonValue({ maxDepth: 1 })).map(([t, extra]) => {
        // The first key of the first object, given again: JSON.parse keeps the last.
        const key = /\{"((?:[^"\\]|\\.)*)":/.exec(t)?.[1];
        return key === undefined ? t : t.replace('{', `{"${key}":${JSON.stringify(extra)},`);
      }),
    },
    { weight: 1, arbitrary: fc.tuple(text, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(1, t.length))) },
    { weight: 1, arbitrary: text.map((t) => `\ufeff${t}`) },
    { weight: 1, arbitrary: text.map((t) => ` \n\t${t}\n `) },
    { weight: 1, arbitrary: fc.tuple(text, fc.string({ maxLength: 5 })).map(([t, junk]) => `${t}${junk}`) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', 'true', '0', '"x"', '{}', '[]', '[null]', 'name=prod', '<x/>', '[{"name":"prod"}', '['.repeat(100_000), '{"a":'.repeat(50_000), `${'['.repeat(200_000)}${']'.repeat(200_000)}`, `[${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}]`, `[${'1,'.repeat(499)}1]`, `[${'{"x":1},'.repeat(499)}{"x":1}]`) },
    { weight: 1, arbitrary: fc.constantFrom(...INVALID_UTF8) },
    { weight: 1, arbitrary: fc.constant(oversize).map((n) => `[{"name":"${'x'.repeat(n)}"}]`) },
  );
}

// ---- paths and query strings ----

/** A path segment for a parameter: a hint, or something no router or decoder expects. */
export function hostileSegment(hint: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: hint.map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent) },
    {
      weight: 3,
      arbitrary: fc.constantFrom('a%2Fb', '..', '.', '%2e%2e', '%2E', '..%2f..%2fetc', '%E0%A4%A', '%C0%AF', '%FF', '%00', '%', '%%', '%zz', '%252F', 'a;b=c', '%20', '+', '~', '*', '%F0%9F%A7%A8', '%ED%A0%80'),
    },
    { weight: 1, arbitrary: fc.integer({ min: 254, max: 8_000 }).map((n) => 'n'.repeat(n)) },
  );
}

/** A value for an integer query parameter: valid, or every way to get a number wrong. */
export function hostileInteger(min: number, max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min, max: Math.min(max, min + 1_000) }).map(String) },
    { weight: 1, arbitrary: fc.integer({ min, max }).map(String) },
    {
      weight: 3,
      arbitrary: fc.constantFrom('0', '-1', '-0', '1.5', '1e3', '0x10', '+1', ' 1', '1 ', '', 'NaN', 'Infinity', '١', '99999999999999999999999', String(Number.MAX_SAFE_INTEGER + 2), '%00', '%', 'null', '[]'),
    },
    { weight: 1, arbitrary: fc.integer().map(String) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }).map((n) => '9'.repeat(n)) },
  );
}
