/**
 * fast-check arbitraries for protocol messages, read from the `.proto` itself (the descriptors
 * `@grpc/proto-loader` makes with the runtime's options), so a field added to the protocol is
 * generated without touching the suites that use this. Values are of the right wire type (the
 * encoder must accept them); what they mean is the hints' business: fields named in `hints` take
 * their values from there (account names, ids, generations), everything else is random or hostile.
 */
import { loadSync } from '@grpc/proto-loader';
import fc from 'fast-check';
import { AGENT_PROTO, PROTO_ROOT } from '../../shared/protocol/loader.ts';
import { LOADER_OPTIONS } from '../../shared/protocol/options.ts';
import { hostileString } from './hostile.ts';

interface FieldDescriptor {
  name: string;
  label: string;
  type: string;
  typeName: string;
}

interface MessageDescriptor {
  field: FieldDescriptor[];
}

const PACKAGE = 'vendor.agent.v1';

let descriptors: Map<string, MessageDescriptor> | undefined;

function descriptorOf(typeName: string): MessageDescriptor {
  if (descriptors === undefined) {
    const loaded = loadSync(AGENT_PROTO, { ...LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
    descriptors = new Map();
    for (const [name, def] of Object.entries(loaded)) {
      const type = (def as { type?: unknown }).type;
      if (type !== undefined && typeof type === 'object' && type !== null && 'field' in type) descriptors.set(name.slice(PACKAGE.length + 1), type as MessageDescriptor);
    }
  }
  const d = descriptors.get(typeName);
  if (d === undefined) throw new Error(`no message ${typeName} in ${AGENT_PROTO}`);
  return d;
}

/** The fields of a message type, by their (camelCase) names. */
export function protoFields(typeName: string): string[] {
  return descriptorOf(typeName).field.map((f) => f.name);
}

/** The message type a field of `typeName` carries (`AgentMessage`, `hello` → `Hello`). */
export function protoFieldType(typeName: string, field: string): string {
  const f = descriptorOf(typeName).field.find((x) => x.name === field);
  if (f === undefined || f.type !== 'TYPE_MESSAGE') throw new Error(`${typeName}.${field} is not a message field`);
  return f.typeName;
}

export type ProtoHints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

/** Unsigned integers that sit on edges: 0, 1, the 32-bit and 53-bit limits, and the 64-bit one as text. */
const edgyUnsigned = (bits: 32 | 64): fc.Arbitrary<number | string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.nat({ max: 10 }) },
    { weight: 2, arbitrary: fc.nat() },
    { weight: 1, arbitrary: fc.constantFrom<number | string>(0xffffffff, ...(bits === 64 ? [Number.MAX_SAFE_INTEGER, '18446744073709551615'] : [])) },
  );

function scalar(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'TYPE_STRING':
      return fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: hostileString });
    case 'TYPE_BYTES':
      return fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));
    case 'TYPE_BOOL':
      return fc.boolean();
    case 'TYPE_UINT32':
    case 'TYPE_FIXED32':
      return edgyUnsigned(32);
    case 'TYPE_UINT64':
    case 'TYPE_FIXED64':
      return edgyUnsigned(64);
    case 'TYPE_INT32':
    case 'TYPE_SINT32':
    case 'TYPE_SFIXED32':
    case 'TYPE_ENUM':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'TYPE_INT64':
    case 'TYPE_SINT64':
    case 'TYPE_SFIXED64':
      return fc.maxSafeInteger();
    case 'TYPE_DOUBLE':
    case 'TYPE_FLOAT':
      return fc.double();
    default:
      throw new Error(`no arbitrary for protobuf ${type}`);
  }
}

/**
 * Messages of `typeName` (a type of `vendor.agent.v1`): every field present or left at its
 * default, lists of up to `maxItems`, nested messages down to `depth`. A hint replaces the value
 * of each field of its name (for a list, of each element).
 */
export function protoMessage(typeName: string, hints: ProtoHints = {}, options: { maxItems?: number; depth?: number } = {}): fc.Arbitrary<Record<string, unknown>> {
  const maxItems = options.maxItems ?? 3;
  const depth = options.depth ?? 4;
  const fields = descriptorOf(typeName).field.map((f) => {
    const hint = hints[f.name];
    const one: fc.Arbitrary<unknown> =
      hint ?? (f.type === 'TYPE_MESSAGE' ? (depth <= 0 ? fc.constant({}) : protoMessage(f.typeName, hints, { maxItems, depth: depth - 1 })) : scalar(f.type));
    const value = f.label === 'LABEL_REPEATED' ? fc.array(one, { maxLength: maxItems }) : one;
    return fc.option(value.map((v): [string, unknown] => [f.name, v]), { freq: 4, nil: undefined });
  });
  return fc.tuple(...fields).map((pairs) => Object.fromEntries(pairs.filter((p) => p !== undefined)));
}
