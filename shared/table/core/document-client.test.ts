import { BatchWriteItemCommand, ConditionalCheckFailedException, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { HttpRequest } from '@smithy/core/transport';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerFromMemory, cannedHandler, sdkDocumentClient, type CannedAnswer, type SeenRequest } from '../../../test/support/sdk-document-client.ts';
import { useTestTables } from '../../../test/support/table.ts';
import { createDocumentClient } from './client.ts';
import { isConditionFailure } from './conditional.ts';
import { usesTableJsonSerde } from './json-serde.ts';
import { useTableSerdeSteps } from './serde-steps.ts';

const TABLE = 't';
const ENDPOINT = 'http://table.invalid:8000';

/** Attribute values as the stores write them, and the kinds they may: sets, binary, nested maps and lists, undefined (removed). */
const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.uint8Array({ minLength: 1, maxLength: 8 }),
    fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 3 }).map((xs) => new Set(xs)),
    fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 3 }).map((xs) => new Set(xs)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), tie('value'), { maxKeys: 3 }),
  ),
})).value;

const item = fc.record({ pk: fc.string({ minLength: 1 }), sk: fc.string({ minLength: 1 }) }).chain((key) =>
  fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }).filter((k) => k !== 'pk' && k !== 'sk'), value, { maxKeys: 5 }).map((rest) => ({ ...rest, ...key })),
);

/** DynamoDB's JSON of an item (binary as base64), for the answers from memory. */
function wire(x: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(marshall(x, { removeUndefinedValues: true }), (_k, v: unknown) => (isBufferJson(v) ? Buffer.from(v.data).toString('base64') : v)));
}

function isBufferJson(v: unknown): v is { type: 'Buffer'; data: number[] } {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data);
}

/** What two clients may send differently for the same command: when and by whom it was signed. */
const PER_REQUEST = new Set(['authorization', 'x-amz-date', 'amz-sdk-invocation-id', 'user-agent', 'x-amz-user-agent']);

function comparable(seen: SeenRequest): Record<string, unknown> {
  const r: HttpRequest = seen.request;
  const body = JSON.parse(seen.body) as Record<string, unknown>;
  // A transaction's idempotency token is made for each request when the caller gives none.
  if (typeof body.ClientRequestToken === 'string') body.ClientRequestToken = 'a token';
  // The body's hash: the same JSON may name a structure's members in another order (the caller's, not the schema's).
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !PER_REQUEST.has(k.toLowerCase()) && k !== 'x-amz-content-sha256'));
  return { method: r.method, protocol: r.protocol, hostname: r.hostname, port: r.port, path: r.path, query: r.query, headers, body };
}

/** Sends `command()` through the SDK's document client and the table client, each answered `answer` from memory. */
async function both(command: () => object, answer: CannedAnswer, at: { endpoint?: string; region: string } = { endpoint: ENDPOINT, region: 'local' }): Promise<{ sdk: Settled; table: Settled }> {
  const run = async (client: DynamoDBDocumentClient): Promise<Settled> => {
    const handler = cannedHandler(() => answer);
    answerFromMemory(client, handler);
    try {
      const send = client.send.bind(client) as (c: object) => Promise<unknown>;
      return { output: await send(command()), request: comparable(handler.seen[0] as SeenRequest) };
    } catch (error) {
      return { error, request: comparable(handler.seen[0] as SeenRequest) };
    }
  };
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  return { sdk: await run(sdkDocumentClient({ ...at, credentials })), table: await run(createDocumentClient({ ...at, credentials })) };
}

interface Settled {
  output?: unknown;
  error?: unknown;
  request: Record<string, unknown>;
}

function expectSame({ sdk, table }: { sdk: Settled; table: Settled }): void {
  expect(table.request).toStrictEqual(sdk.request);
  expect(table.output).toStrictEqual(sdk.output);
  if (sdk.error !== undefined || table.error !== undefined) {
    expect(table.error).toBeInstanceOf((sdk.error as object).constructor);
    // Retries wait a random while.
    const settled = (e: unknown) => ({ ...(e as object), $response: undefined, $metadata: { ...(e as { $metadata: object }).$metadata, totalRetryDelay: undefined } });
    expect(settled(table.error)).toStrictEqual(settled(sdk.error));
    expect((table.error as Error).message).toBe((sdk.error as Error).message);
    expect('$response' in (table.error as object)).toBe('$response' in (sdk.error as object));
  }
}

describe('the table client, request by request against the SDK’s document client', () => {
  const runs = { numRuns: 40 };

  it('sends the same GetItem, PutItem, UpdateItem and DeleteItem, and answers the same', async () => {
    await fc.assert(
      fc.asyncProperty(item, async (x) => {
        const key = { pk: x.pk, sk: x.sk };
        expectSame(await both(() => new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }), { body: { Item: wire(x) } }));
        expectSame(await both(() => new PutCommand({ TableName: TABLE, Item: x, ConditionExpression: 'attribute_not_exists(pk)' }), { body: {} }));
        expectSame(
          await both(
            () =>
              new UpdateCommand({
                TableName: TABLE,
                Key: key,
                UpdateExpression: 'SET #v = :v, n = n + :one',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#v': 'v' },
                ExpressionAttributeValues: { ':v': x, ':one': 1 },
                ReturnValues: 'ALL_NEW',
              }),
            { body: { Attributes: wire(x), ConsumedCapacity: { TableName: TABLE, CapacityUnits: 1.5 } } },
          ),
        );
        expectSame(await both(() => new DeleteCommand({ TableName: TABLE, Key: key, ReturnValues: 'ALL_OLD' }), { body: { Attributes: wire(x) } }));
      }),
      runs,
    );
  });

  it('sends the same Query and Scan pages, ExclusiveStartKey and LastEvaluatedKey included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 4 }), async (xs) => {
        const last = xs.at(-1);
        const lastKey = last === undefined ? undefined : { pk: last.pk, sk: last.sk };
        const page = { Items: xs.map(wire), Count: xs.length, ScannedCount: xs.length, ...(lastKey === undefined ? {} : { LastEvaluatedKey: wire(lastKey) }) };
        expectSame(
          await both(
            () =>
              new QueryCommand({
                TableName: TABLE,
                KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
                ExpressionAttributeValues: { ':pk': xs[0]?.pk ?? 'p', ':p': 'a' },
                Limit: 4,
                ...(lastKey === undefined ? {} : { ExclusiveStartKey: lastKey }),
              }),
            { body: page },
          ),
        );
        expectSame(await both(() => new ScanCommand({ TableName: TABLE, Limit: 4, ...(lastKey === undefined ? {} : { ExclusiveStartKey: lastKey }) }), { body: page }));
      }),
      runs,
    );
  });

  it('sends the same batches, and answers the same UnprocessedItems and UnprocessedKeys', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 25 }), async (xs) => {
        const keys = xs.map((x) => ({ pk: x.pk, sk: x.sk }));
        const writes = xs.map((x, i) => (i % 3 === 2 ? { DeleteRequest: { Key: { pk: x.pk, sk: x.sk } } } : { PutRequest: { Item: x } }));
        const unprocessed = xs.slice(0, 2).map((x) => ({ PutRequest: { Item: wire(x) } }));
        expectSame(await both(() => new BatchWriteCommand({ RequestItems: { [TABLE]: writes } }), { body: { UnprocessedItems: { [TABLE]: unprocessed } } }));
        expectSame(
          await both(() => new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }), {
            body: { Responses: { [TABLE]: xs.slice(1).map(wire) }, UnprocessedKeys: { [TABLE]: { Keys: keys.slice(0, 1).map(wire), ConsistentRead: true } } },
          }),
        );
        // Items already in attribute-value form go out as they are (shared/table/core/batch.ts batchWriteItems).
        const raw = xs.map((x) => ({ PutRequest: { Item: marshall(x, { removeUndefinedValues: true }) } }));
        expectSame(await both(() => new BatchWriteItemCommand({ RequestItems: { [TABLE]: raw } }), { body: { UnprocessedItems: {} } }));
      }),
      runs,
    );
  });

  it('sends the same transactions', async () => {
    await fc.assert(
      fc.asyncProperty(item, item, async (a, b) => {
        expectSame(
          await both(
            () =>
              new TransactWriteCommand({
                TransactItems: [
                  { Put: { TableName: TABLE, Item: a, ConditionExpression: 'attribute_not_exists(pk)' } },
                  { Update: { TableName: TABLE, Key: { pk: b.pk, sk: b.sk }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': b } } },
                  { ConditionCheck: { TableName: TABLE, Key: { pk: a.pk, sk: 'x' }, ConditionExpression: 'attribute_exists(pk)' } },
                ],
              }),
            { body: {} },
          ),
        );
        expectSame(await both(() => new TransactGetCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: { pk: a.pk, sk: a.sk } } }] }), { body: { Responses: [{ Item: wire(a) }, {}] } }));
      }),
      runs,
    );
  });

  it('refuses what the document client refuses, with the same errors', async () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, -(2 ** 60), new Date(0), new Set()]) {
      const sdk = sdkDocumentClient({ endpoint: ENDPOINT });
      const table = createDocumentClient({ endpoint: ENDPOINT, region: 'local' });
      for (const c of [sdk, table]) answerFromMemory(c, cannedHandler(() => ({ body: {} })));
      const put = () => new PutCommand({ TableName: TABLE, Item: { pk: 'a', sk: 'b', bad } });
      const sdkError = await sdk.send(put()).then(() => undefined, (e: unknown) => e as Error);
      const tableError = await table.send(put()).then(() => undefined, (e: unknown) => e as Error);
      expect(sdkError).toBeInstanceOf(Error);
      expect(tableError?.message).toBe(sdkError?.message);
    }
  });

  it('throws the same errors the table answers, conditional failures among them', async () => {
    const failed = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed', Item: wire({ pk: 'a', sk: 'b', v: 1 }) } };
    const outcome = await both(() => new UpdateCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' }, UpdateExpression: 'SET v = :v', ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': 2, ':w': 0 }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }), failed);
    expect(outcome.table.error).toBeInstanceOf(ConditionalCheckFailedException);
    expectSame(outcome);
    const missing = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' } };
    const none = await both(() => new GetCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' } }), missing);
    expect((none.table.error as Error).name).toBe('ResourceNotFoundException');
    expectSame(none);
    // Answers the protocol cannot read: a page from a proxy in front of the table, a cut-off body.
    const page = { status: 502, body: Buffer.from('<html><body>Bad Gateway</body></html>') };
    const gateway = await both(() => new GetCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' } }), page);
    expect((gateway.table.error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(502);
    expectSame(gateway);
    const cut = await both(() => new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'a' } }), { body: Buffer.from('{"Items":[{"pk":{"S":"a"') });
    expect(cut.table.error).toBeInstanceOf(Error);
    expectSame(cut);
  });

  it('sends to DynamoDB’s own endpoint as the SDK does when none is configured', async () => {
    const region = { region: 'eu-west-1' };
    for (const tableName of ['vendor', 'another-table']) {
      const outcome = await both(() => new GetCommand({ TableName: tableName, Key: { pk: 'a', sk: 'b' } }), { body: { Item: wire({ pk: 'a', sk: 'b' }) } }, region);
      expect(outcome.table.request.hostname).toBe('dynamodb.eu-west-1.amazonaws.com');
      expectSame(outcome);
    }
  });

  it('writes and reads the item operations with its own JSON and steps', () => {
    // The SDK still has the two steps the table client puts its own in place of.
    const plain = new DynamoDBClient({ endpoint: ENDPOINT, region: 'local' });
    expect(useTableSerdeSteps(plain.middlewareStack, plain.config as unknown as Parameters<typeof useTableSerdeSteps>[1])).toBe(true);
    const client = createDocumentClient({ endpoint: ENDPOINT, region: 'local' });
    expect(usesTableJsonSerde((client.config as { protocol?: unknown }).protocol)).toBe(true);
    expect(usesTableJsonSerde((sdkDocumentClient({ endpoint: ENDPOINT }).config as { protocol?: unknown }).protocol)).toBe(false);
  });
});

describe('the table client’s middleware stack', () => {
  const local = { endpoint: ENDPOINT, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

  it('runs a step added or removed after its first requests, as the SDK’s client does', async () => {
    const client = createDocumentClient(local);
    answerFromMemory(client, cannedHandler(() => ({ body: {} })));
    const get = () => new GetCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' } });
    await client.send(get());
    const seen: unknown[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        seen.push([context.commandName, (args.input as { Key?: unknown }).Key]);
        return next(args);
      },
      { step: 'initialize', name: 'seeKeys' },
    );
    await client.send(get());
    // The steps before the marshalling see the command's input as the caller wrote it.
    expect(seen).toEqual([['GetItemCommand', { pk: 'a', sk: 'b' }]]);
    client.middlewareStack.remove('seeKeys');
    await client.send(get());
    expect(seen).toHaveLength(1);
  });

  it('answers a command sent with options (the SDK’s own way) as one sent without', async () => {
    const client = createDocumentClient(local);
    const handler = cannedHandler(() => ({ body: { Item: wire({ pk: 'a', sk: 'b', tags: new Set(['x']) }) } }));
    answerFromMemory(client, handler);
    const get = () => new GetCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' } });
    const plain = await client.send(get());
    const withOptions = await client.send(get(), { abortSignal: new AbortController().signal });
    expect(withOptions).toStrictEqual(plain);
    expect(withOptions.Item).toEqual({ pk: 'a', sk: 'b', tags: new Set(['x']) });
    expect(JSON.parse(handler.seen[1]?.body ?? '')).toStrictEqual(JSON.parse(handler.seen[0]?.body ?? ''));
  });

  it('hands an error answer straight to the SDK’s step, which reads it once', async () => {
    const client = createDocumentClient(local);
    const failed = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'The conditional request failed' } };
    let answers = 0;
    answerFromMemory(client, cannedHandler(() => (answers++ === 0 ? failed : { body: {} })));
    const protocol = (client.config as unknown as { protocol: { deserializeResponse: (...args: unknown[]) => Promise<unknown> } }).protocol;
    const read = protocol.deserializeResponse.bind(protocol);
    let reads = 0;
    protocol.deserializeResponse = (...args: unknown[]) => {
      reads++;
      return read(...args);
    };
    const update = () => new UpdateCommand({ TableName: TABLE, Key: { pk: 'a', sk: 'b' }, UpdateExpression: 'SET v = :v', ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': 2, ':w': 0 } });
    await expect(client.send(update())).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    // An answer of 2xx is read once by the table client's own step; an error answer is not tried there first.
    expect(reads).toBe(1);
    await client.send(update());
    expect(reads).toBe(2);
  });

  it('answers the low-level commands as the SDK does', async () => {
    const client = createDocumentClient(local);
    answerFromMemory(client, cannedHandler(() => ({ body: { Table: { TableName: TABLE, TableStatus: 'ACTIVE', CreationDateTime: 1_790_000_000.5 } } })));
    const out = await client.send(new DescribeTableCommand({ TableName: TABLE }));
    expect(out.Table?.CreationDateTime).toEqual(new Date(1_790_000_000_500));
  });
});

describe('the table client against dynalite', () => {
  const tables = useTestTables();

  it('round-trips every kind of value the stores write, as the SDK’s document client reads them', async () => {
    const table = await tables.fresh();
    const sdk = sdkDocumentClient({ endpoint: tables.endpoint });
    const written = {
      pk: 'ITEM',
      sk: 'all-kinds',
      s: 'text',
      empty: '',
      n: 42,
      d: -0.125,
      big: Number.MAX_SAFE_INTEGER,
      yes: true,
      nothing: null,
      gone: undefined,
      bytes: new Uint8Array([0, 1, 254, 255]),
      strings: new Set(['a', 'b']),
      numbers: new Set([1, 2.5]),
      binaries: new Set([new Uint8Array([1]), new Uint8Array([2, 3])]),
      nested: { list: [1, 'two', { three: [true, null] }], map: { deep: { deeper: 'x' } }, skip: undefined },
    };
    await table.client.send(new PutCommand({ TableName: table.tableName, Item: written }));
    const key = { pk: 'ITEM', sk: 'all-kinds' };
    const ours = await table.client.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }));
    const theirs = await sdk.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }));
    expect(ours.Item).toStrictEqual(theirs.Item);
    const { gone: _gone, ...kept } = written;
    expect(ours.Item).toEqual({ ...kept, bytes: new Uint8Array([0, 1, 254, 255]), nested: { list: [1, 'two', { three: [true, null] }], map: { deep: { deeper: 'x' } } } });
    const updated = await table.client.send(
      new UpdateCommand({ TableName: table.tableName, Key: key, UpdateExpression: 'SET n = n + :one, bytes = :b', ExpressionAttributeValues: { ':one': 1, ':b': new Uint8Array([9]) }, ReturnValues: 'UPDATED_NEW' }),
    );
    expect(updated.Attributes).toStrictEqual({ n: 43, bytes: new Uint8Array([9]) });
  });

  it('pages a Query with ExclusiveStartKey and LastEvaluatedKey, and batches writes and reads', async () => {
    const table = await tables.fresh();
    const items = Array.from({ length: 30 }, (_, i) => ({ pk: 'P', sk: `s${String(i).padStart(2, '0')}`, i, tags: new Set([`t${i}`]) }));
    for (let i = 0; i < items.length; i += 25) {
      const out = await table.client.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: items.slice(i, i + 25).map((x) => ({ PutRequest: { Item: x } })) } }));
      expect(out.UnprocessedItems ?? {}).toEqual({});
    }
    const read: unknown[] = [];
    let start: Record<string, unknown> | undefined;
    let pages = 0;
    do {
      const page = await table.client.send(new QueryCommand({ TableName: table.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P' }, Limit: 7, ...(start === undefined ? {} : { ExclusiveStartKey: start }) }));
      read.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
      pages++;
    } while (start !== undefined);
    expect(pages).toBeGreaterThan(4);
    expect(read).toEqual(items);
    const got = await table.client.send(new BatchGetCommand({ RequestItems: { [table.tableName]: { Keys: items.slice(0, 10).map(({ pk, sk }) => ({ pk, sk })) } } }));
    expect(new Set(got.Responses?.[table.tableName])).toEqual(new Set(items.slice(0, 10)));
    expect(got.UnprocessedKeys ?? {}).toEqual({});
  });

  it('fails a conditional write with ConditionalCheckFailedException', async () => {
    const table = await tables.fresh();
    await table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: 'C', sk: 'c', v: 1 } }));
    const err = await table.client
      .send(new UpdateCommand({ TableName: table.tableName, Key: { pk: 'C', sk: 'c' }, UpdateExpression: 'SET v = :v', ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': 2, ':w': 0 } }))
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConditionalCheckFailedException);
    expect(isConditionFailure(err)).toBe(true);
    const still = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: 'C', sk: 'c' }, ConsistentRead: true }));
    expect(still.Item).toEqual({ pk: 'C', sk: 'c', v: 1 });
  });
});
