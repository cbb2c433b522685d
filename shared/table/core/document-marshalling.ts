import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { marshallOptions, unmarshallOptions } from '@aws-sdk/util-dynamodb';

/**
 * Which parts of a command's input or output hold items or attribute values, as each document command
 * of `@aws-sdk/lib-dynamodb` declares them (its `inputKeyNodes` and `outputKeyNodes`): `null` is the
 * value itself, an empty object or array every value (or member) of it, `{ '*': nodes }` every value of
 * it walked by `nodes`, any other object the named children walked by their nodes.
 */
export type KeyNodes = null | readonly unknown[] | { readonly [key: string]: KeyNodes };

/** What the document client marshals items with (`createDocumentClient`'s `marshallOptions`, as the document client completes them). */
export const TABLE_MARSHALL_OPTIONS: marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: false, convertTopLevelContainer: true };
export const TABLE_UNMARSHALL_OPTIONS: unmarshallOptions = { convertWithoutMapWrapper: true };

const NEXT_LEVEL = '*';

type Convert = (value: unknown) => unknown;

/**
 * The walk of the document client (`marshallInput`/`unmarshallOutput` of `@aws-sdk/lib-dynamodb`),
 * with plain loops where it builds arrays of entries and spreads: the same results, values that are
 * functions left out as it leaves them out.
 */
function walk(value: unknown, convert: Convert, nodes: KeyNodes): unknown {
  if (value === undefined) return undefined;
  if (nodes === null) return convert(value);
  const keys = Object.keys(nodes);
  if (keys.length === 0) return convertAll(value as object, convert);
  if (keys.length === 1 && keys[0] === NEXT_LEVEL) {
    const inner = (nodes as { [key: string]: KeyNodes })[NEXT_LEVEL] as KeyNodes;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'function') out[i] = walk(value[i], convert, inner);
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const key in value as object) {
      if (!Object.hasOwn(value as object, key)) continue;
      const v = (value as Record<string, unknown>)[key];
      if (typeof v !== 'function') out[key] = walk(v, convert, inner);
    }
    return out;
  }
  return walkChildren(value as object, convert, nodes as { [key: string]: KeyNodes });
}

function convertAll(value: object, convert: Convert): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) if (typeof v !== 'function') out.push(v === undefined ? undefined : convert(v));
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === 'function') continue;
    const converted = convert(v);
    if (converted !== undefined && typeof converted !== 'function') out[key] = converted;
  }
  return out;
}

function walkChildren(value: object, convert: Convert, nodes: { [key: string]: KeyNodes }): unknown {
  let out: Record<string, unknown> | unknown[];
  if (Array.isArray(value)) out = value.filter((v) => typeof v !== 'function');
  else {
    out = {};
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const v = (value as Record<string, unknown>)[key];
      if (typeof v !== 'function') out[key] = v;
    }
  }
  for (const key in nodes) {
    if (!Object.hasOwn(nodes, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === 'function') continue;
    const converted = walk(v, convert, nodes[key] as KeyNodes);
    if (converted !== undefined && typeof converted !== 'function') (out as Record<string, unknown>)[key] = converted;
  }
  return out;
}

const UNDEFINED_IN_CONTAINER = 'Pass options.removeUndefinedValues=true to remove undefined values from map/array/set.';

/** The type names `@aws-sdk/util-dynamodb` takes for binary values. */
const BINARY_TYPES = new Set([
  'ArrayBuffer',
  'Blob',
  'Buffer',
  'DataView',
  'File',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
]);

function typeName(value: unknown): unknown {
  return (value as { constructor?: { name?: unknown } } | null | undefined)?.constructor?.name;
}

function isBinary(value: unknown): boolean {
  return (value as { constructor?: unknown } | null | undefined)?.constructor ? BINARY_TYPES.has(typeName(value) as string) : false;
}

function numberAttribute(value: number): { N: string } {
  const text = value.toString();
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') throw new Error(`Special numeric value ${text} is not allowed`);
  if (Number(value) > Number.MAX_SAFE_INTEGER) throw new Error(`Number ${text} is greater than Number.MAX_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
  if (Number(value) < Number.MIN_SAFE_INTEGER) throw new Error(`Number ${text} is lesser than Number.MIN_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
  return { N: text };
}

function setAttribute(set: Set<unknown>): unknown {
  const members = [...set].filter((v) => v !== undefined);
  if (members.length === 0) throw new Error('Pass a non-empty set, or options.convertEmptyValues=true.');
  const first = members[0];
  if (first instanceof NumberValue) return { NS: members.map((v) => String(v)) };
  if (typeof first === 'number') return { NS: members.map((v) => numberAttribute(v as number).N) };
  if (typeof first === 'bigint') return { NS: members.map((v) => String(v)) };
  if (typeof first === 'string') return { SS: members.map((v) => String(v)) };
  if (isBinary(first)) return { BS: members };
  throw new Error('Only Number Set (NS), Binary Set (BS) or String Set (SS) are allowed.');
}

/**
 * `marshall` of `@aws-sdk/util-dynamodb` (`convertToAttr`) with `TABLE_MARSHALL_OPTIONS`: the same
 * tests in the same order, the same answers and the same errors, with plain loops where the SDK's
 * build arrays of entries and look each value's type name up in a list.
 */
function marshallValue(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      return numberAttribute(value);
    case 'boolean':
      return { BOOL: value };
    case 'bigint':
      return { N: value.toString() };
    case 'undefined':
      throw new Error(UNDEFINED_IN_CONTAINER);
    default:
      break;
  }
  if (value === null) return { NULL: true };
  if (Array.isArray(value)) {
    const list: unknown[] = [];
    for (const v of value) if (v !== undefined && typeof v !== 'function') list.push(marshallValue(v));
    return { L: list };
  }
  const name = typeName(value);
  if (name === 'Set') return setAttribute(value as Set<unknown>);
  if (name === 'Map') {
    const map: Record<string, unknown> = {};
    for (const [k, v] of value as Map<string, unknown>) if (v !== undefined && typeof v !== 'function') map[k] = marshallValue(v);
    return { M: map };
  }
  if (name === 'Object' || (!(value as { constructor?: unknown }).constructor && typeof value === 'object')) {
    const map: Record<string, unknown> = {};
    // Every enumerable key, inherited ones too, as the SDK's own walk takes them.
    for (const key in value as object) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined && typeof v !== 'function') map[key] = marshallValue(v);
    }
    return { M: map };
  }
  if (isBinary(value)) return { B: value };
  if (name === 'Boolean') return { BOOL: (value as boolean).valueOf() };
  if (name === 'Number') return numberAttribute(value as number);
  if (value instanceof NumberValue) return value.toAttributeValue();
  if (name === 'String') return { S: (value as string).toString() };
  throw new Error(`Unsupported type passed: ${String(value)}. Pass options.convertClassInstanceToMap=true to marshall typeof object as map attribute.`);
}

/** A number as `unmarshall` of `@aws-sdk/util-dynamodb` reads it without `wrapNumbers`: a big integer past the safe ones. */
function nativeNumber(text: string): number | bigint {
  const n = Number(text);
  if ((n > Number.MAX_SAFE_INTEGER || n < Number.MIN_SAFE_INTEGER) && n !== Number.POSITIVE_INFINITY && n !== Number.NEGATIVE_INFINITY) {
    try {
      return BigInt(text);
    } catch {
      throw new Error(`${text} can't be converted to BigInt. Set options.wrapNumbers to get string value.`);
    }
  }
  return n;
}

/**
 * `unmarshall` of `@aws-sdk/util-dynamodb` (`convertToNative`) with `TABLE_UNMARSHALL_OPTIONS`
 * (numbers as JavaScript numbers): the same answers and errors.
 */
function unmarshallValue(value: unknown): unknown {
  const av = value as Record<string, unknown>;
  for (const key in av) {
    if (!Object.hasOwn(av, key)) continue;
    const v = av[key];
    if (v === undefined) continue;
    switch (key) {
      case 'NULL':
        return null;
      case 'BOOL':
        return Boolean(v);
      case 'N':
        return nativeNumber(v as string);
      case 'B':
      case 'S':
        return v;
      case 'L':
        return (v as unknown[]).map(unmarshallValue);
      case 'M': {
        const map: Record<string, unknown> = {};
        for (const k in v as object) if (Object.hasOwn(v as object, k)) map[k] = unmarshallValue((v as Record<string, unknown>)[k]);
        return map;
      }
      case 'NS':
        return new Set((v as string[]).map(nativeNumber));
      case 'BS':
      case 'SS':
        return new Set(v as unknown[]);
      default:
        throw new Error(`Unsupported type passed: ${key}`);
    }
  }
  throw new Error(`No value defined: ${JSON.stringify(av)}`);
}

/** A document command's input with its items and values in DynamoDB's attribute-value form. */
export function marshallDocumentInput<T extends object>(input: T, nodes: KeyNodes): T {
  return walkChildren(input, marshallValue, nodes as { [key: string]: KeyNodes }) as T;
}

/** A command's output with its items and values as plain JavaScript values, as the document client answers. */
export function unmarshallDocumentOutput<T extends object>(output: T, nodes: KeyNodes): T {
  return walkChildren(output, unmarshallValue, nodes as { [key: string]: KeyNodes }) as T;
}
