/**
 * DynamoDB's item operations speak plain JSON: attribute values are JSON objects with string numbers, and
 * only binary values (`B`, `BS`) need more than `JSON.stringify` and `JSON.parse`. The SDK's protocol
 * writes and reads every request and answer by walking the operation's schema, member by member; for
 * the item operations the table client writes and reads them with one `JSON.stringify` or
 * `JSON.parse`, keeping the top-level members the schema names, and hands anything holding binary
 * values (or anything else) to the SDK's own (docs/table.md#the-client).
 */

const NAMESPACE = 'com.amazonaws.dynamodb';
/**
 * Operations whose input has no member the SDK fills in itself: TransactWriteItems is not among them,
 * since the SDK gives it a `ClientRequestToken` (idempotency token) when the caller did not.
 */
const ITEM_OPERATIONS = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'BatchWriteItem', 'TransactGetItems'];
const ITEM_OPERATION_NAMES = new Set<unknown>(ITEM_OPERATIONS);
const INPUTS = new Set(ITEM_OPERATIONS.map((o) => `${o}Input`));
const OUTPUTS = new Set(ITEM_OPERATIONS.map((o) => `${o}Output`));

/** Whether `name` (`GetItem`, ...) is an operation whose requests and answers the table client writes and reads as plain JSON. */
export function isItemOperation(name: unknown): boolean {
  return ITEM_OPERATION_NAMES.has(name);
}

/** The SDK's static structure schema: `[3, namespace, name, traits, memberNames, memberSchemas, ...]`. */
type StructSchema = readonly [3, string, string, unknown, readonly string[], ...unknown[]];

interface ShapeSerializer {
  write(schema: unknown, value: unknown): void;
  flush(): unknown;
  setSerdeContext(context: unknown): void;
}

interface ShapeDeserializer {
  read(schema: unknown, data: unknown): Promise<unknown>;
  setSerdeContext(context: unknown): void;
}

interface SchemaProtocol {
  serializer?: ShapeSerializer;
  deserializer?: ShapeDeserializer;
}

function itemStruct(schema: unknown, names: ReadonlySet<string>): StructSchema | undefined {
  if (!Array.isArray(schema)) {
    // A normalized schema (what the protocol reads answers with) keeps the static one.
    const inner = (schema as { getSchema?: () => unknown } | null)?.getSchema?.();
    return Array.isArray(inner) ? itemStruct(inner, names) : undefined;
  }
  return schema[0] === 3 && schema[1] === NAMESPACE && names.has(schema[2] as string) && Array.isArray(schema[4]) ? (schema as unknown as StructSchema) : undefined;
}

/** The members `schema` names, those that are neither undefined nor null, as the SDK writes them. */
function members(schema: StructSchema, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of schema[4]) {
    const v = value[name];
    if (v !== undefined && v !== null) out[name] = v;
  }
  return out;
}

/**
 * Binary values written by `JSON.stringify`: a `Uint8Array` becomes an object (`{"0":…}`, or a Buffer's
 * `{"type":"Buffer",…}`) where DynamoDB wants base64. An attribute named `B` holding a map or list
 * matches too, and goes the SDK's way, which is slower but as right.
 */
const WRITTEN_BINARY = /"B":\{|"BS":\[\{/;
/** Binary values in an answer, which the SDK turns into `Uint8Array`s. */
const READ_BINARY = /"BS?":/;

class TableJsonSerializer implements ShapeSerializer {
  readonly #sdk: ShapeSerializer;
  #body: string | undefined;

  constructor(sdk: ShapeSerializer) {
    this.#sdk = sdk;
  }

  write(schema: unknown, value: unknown): void {
    this.#body = undefined;
    const struct = itemStruct(schema, INPUTS);
    if (struct !== undefined && typeof value === 'object' && value !== null) {
      const body = JSON.stringify(members(struct, value as Record<string, unknown>));
      if (!WRITTEN_BINARY.test(body)) {
        this.#body = body;
        return;
      }
    }
    this.#sdk.write(schema, value);
  }

  flush(): unknown {
    const body = this.#body;
    if (body === undefined) return this.#sdk.flush();
    this.#body = undefined;
    return body;
  }

  setSerdeContext(context: unknown): void {
    this.#sdk.setSerdeContext(context);
  }
}

class TableJsonDeserializer implements ShapeDeserializer {
  readonly #sdk: ShapeDeserializer;

  constructor(sdk: ShapeDeserializer) {
    this.#sdk = sdk;
  }

  async read(schema: unknown, data: unknown): Promise<unknown> {
    const struct = itemStruct(schema, OUTPUTS);
    if (struct !== undefined && data instanceof Uint8Array) {
      const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
      if (!READ_BINARY.test(text)) {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return members(struct, parsed as Record<string, unknown>);
      }
    }
    return this.#sdk.read(schema, data);
  }

  setSerdeContext(context: unknown): void {
    this.#sdk.setSerdeContext(context);
  }
}

/**
 * Puts the table client's JSON writer and reader in front of the SDK's on `protocol` (the client's
 * `config.protocol`). Answers whether it could: a protocol without the serializer and deserializer
 * this expects (another SDK version) is left as it is, and works as before.
 */
export function useTableJsonSerde(protocol: unknown): boolean {
  const p = protocol as SchemaProtocol | null;
  const serializer = p?.serializer;
  const deserializer = p?.deserializer;
  if (p === null || typeof serializer?.write !== 'function' || typeof serializer.flush !== 'function' || typeof deserializer?.read !== 'function') return false;
  if (serializer instanceof TableJsonSerializer) return true;
  p.serializer = new TableJsonSerializer(serializer);
  p.deserializer = new TableJsonDeserializer(deserializer);
  return true;
}

/** Whether `protocol` writes and reads the item operations with the table client's JSON (for tests). */
export function usesTableJsonSerde(protocol: unknown): boolean {
  return (protocol as SchemaProtocol | null)?.serializer instanceof TableJsonSerializer;
}
