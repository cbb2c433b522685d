import { marshall, unmarshall, type marshallOptions, type unmarshallOptions } from '@aws-sdk/util-dynamodb';

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

type AttributeValue = Parameters<typeof unmarshall>[0];

/**
 * `marshall` of `@aws-sdk/util-dynamodb` with `TABLE_MARSHALL_OPTIONS`, written out for the values the
 * stores keep (strings, numbers, booleans, null, arrays, plain objects), where the SDK's tests each
 * value against a list of type names and builds arrays of entries; anything else (sets, maps, binary,
 * big integers, boxed values) is the SDK's own. Same answers, same errors.
 */
function marshallValue(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`Special numeric value ${value.toString()} is not allowed`);
      if (value > Number.MAX_SAFE_INTEGER) throw new Error(`Number ${value.toString()} is greater than Number.MAX_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
      if (value < Number.MIN_SAFE_INTEGER) throw new Error(`Number ${value.toString()} is lesser than Number.MIN_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
      return { N: value.toString() };
    case 'boolean':
      return { BOOL: value };
    case 'object': {
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) {
        const list: unknown[] = [];
        for (const v of value) if (v !== undefined && typeof v !== 'function') list.push(marshallValue(v));
        return { L: list };
      }
      const type = (value as { constructor?: { name?: unknown } }).constructor;
      if (type === undefined || type === null || type.name === 'Object') {
        const map: Record<string, unknown> = {};
        // Every enumerable key, inherited ones too, as the SDK's own walk takes them.
        for (const key in value) {
          const v = (value as Record<string, unknown>)[key];
          if (v !== undefined && typeof v !== 'function') map[key] = marshallValue(v);
        }
        return { M: map };
      }
      return marshall(value, TABLE_MARSHALL_OPTIONS);
    }
    default:
      return marshall(value, TABLE_MARSHALL_OPTIONS);
  }
}

/**
 * `unmarshall` of `@aws-sdk/util-dynamodb` with `TABLE_UNMARSHALL_OPTIONS` (numbers as JavaScript
 * numbers), written out for strings, safe numbers, booleans, null, lists and maps; sets, binary and
 * numbers past the safe integers are the SDK's own.
 */
function unmarshallValue(value: unknown): unknown {
  const av = value as Record<string, unknown>;
  for (const key in av) {
    if (!Object.hasOwn(av, key)) continue;
    const v = av[key];
    if (v === undefined) continue;
    switch (key) {
      case 'S':
        return v;
      case 'N': {
        const n = Number(v);
        if (n <= Number.MAX_SAFE_INTEGER && n >= Number.MIN_SAFE_INTEGER) return n;
        return unmarshall(av as AttributeValue, TABLE_UNMARSHALL_OPTIONS);
      }
      case 'BOOL':
        return Boolean(v);
      case 'NULL':
        return null;
      case 'M': {
        const map: Record<string, unknown> = {};
        for (const k in v as object) if (Object.hasOwn(v as object, k)) map[k] = unmarshallValue((v as Record<string, unknown>)[k]);
        return map;
      }
      case 'L':
        return (v as unknown[]).map(unmarshallValue);
      default:
        return unmarshall(av as AttributeValue, TABLE_UNMARSHALL_OPTIONS);
    }
  }
  return unmarshall(av as AttributeValue, TABLE_UNMARSHALL_OPTIONS);
}

/** A document command's input with its items and values in DynamoDB's attribute-value form. */
export function marshallDocumentInput<T extends object>(input: T, nodes: KeyNodes): T {
  return walkChildren(input, marshallValue, nodes as { [key: string]: KeyNodes }) as T;
}

/** A command's output with its items and values as plain JavaScript values, as the document client answers. */
export function unmarshallDocumentOutput<T extends object>(output: T, nodes: KeyNodes): T {
  return walkChildren(output, unmarshallValue, nodes as { [key: string]: KeyNodes }) as T;
}
