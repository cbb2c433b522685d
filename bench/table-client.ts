/**
 * `node bench/table-client.ts`: the CPU the table client spends per request, by the commands the hot
 * paths send (a consistent GetItem, a conditional UpdateItem answering the new item, a Query of a page,
 * a BatchWriteItem of 25 puts, a BatchGetItem of 25 keys), for the table client (`createDocumentClient`)
 * against the AWS SDK's own document client (`DynamoDBDocumentClient` over a `DynamoDBClient`, with the
 * same timeouts, retries and hash: test/support/sdk-document-client.ts), in the same run. Two transports:
 *
 * - `offline`: a request handler that answers every request at once from memory, so the figure is the
 *   client's own CPU (marshalling, middleware, signing, parsing) and nothing of a network or a table;
 * - `dynalite`: the embedded table in a process of its own (`bench/table-process.ts`), reached over
 *   loopback HTTP, so this process's CPU is the client's plus Node's HTTP client and sockets.
 *
 * Each client sends BENCH_REQUESTS (default 2000) of each command, BENCH_CONCURRENCY (default 1) at a
 * time, in BENCH_ROUNDS (default 8) rounds alternating the two clients, so that a change in the
 * machine's load falls on both; 200 of each first, uncounted, to warm both up.
 * Prints one JSON line per transport and command with the CPU microseconds per request of each and
 * their ratio. BENCH_TRANSPORTS=offline|dynalite|offline,dynalite (both by default); BENCH_CLIENTS=table
 * sends through the table client alone, for a CPU profile (`node --cpu-prof bench/table-client.ts`).
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../shared/table/core/client.ts';
import { answerFromMemory, cannedHandler, sdkDocumentClient } from '../test/support/sdk-document-client.ts';
import { round } from './stats.ts';
import { loadAverage, startBenchTable } from './support.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'offline,dynalite').split(',');
/** `table` alone: only the table client sends (for a CPU profile of it, `node --cpu-prof`); no ratios. */
const ONLY_TABLE = process.env.BENCH_CLIENTS === 'table';
const LOCAL = { region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

const TABLE = 'vendor';

/** An account item much as the table holds them: strings, numbers, a nested map, a list. */
function item(i: number): Record<string, unknown> {
  return {
    pk: 'ACCOUNT',
    sk: `account-${String(i).padStart(5, '0')}`,
    name: `account-${i}`,
    zoneId: 'zone-1',
    state: 'ACTIVE',
    version: 7,
    generation: 3,
    updatedAt: 1_790_000_000_000 + i,
    settings: { namespaces: ['default', 'apps'], limits: { cpu: '2', memory: '4Gi' }, labels: { team: 'platform' } },
    kubeconfigRef: `secret/${i}`,
  };
}

type Send = (client: DynamoDBDocumentClient, i: number) => Promise<unknown>;

const KEYS = Array.from({ length: 25 }, (_, i) => ({ pk: 'ACCOUNT', sk: item(i).sk }));

/** The commands the hot paths send, each with the answer the offline handler gives it. */
const COMMANDS: { name: string; send: Send; answer: Record<string, unknown> }[] = [
  {
    name: 'GetItem',
    send: (c, i) => c.send(new GetCommand({ TableName: TABLE, Key: KEYS[i % 25], ConsistentRead: true })),
    answer: { Item: itemValue(item(0)) },
  },
  {
    name: 'UpdateItem',
    send: (c, i) =>
      c.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: KEYS[i % 25],
          UpdateExpression: 'SET #state = :state, #version = #version + :one, updatedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
          ExpressionAttributeValues: { ':state': 'ACTIVE', ':one': 1, ':now': 1_790_000_000_000 + i },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    answer: { Attributes: itemValue(item(0)) },
  },
  {
    name: 'Query',
    send: (c) =>
      c.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': 'ACCOUNT', ':prefix': 'account-' },
          Limit: 25,
        }),
      ),
    answer: { Items: KEYS.map((_, i) => itemValue(item(i))), Count: 25, ScannedCount: 25, LastEvaluatedKey: { pk: { S: 'ACCOUNT' }, sk: { S: 'account-00024' } } },
  },
  {
    name: 'BatchWriteItem',
    send: (c, i) => c.send(new BatchWriteCommand({ RequestItems: { [TABLE]: KEYS.map((_, j) => ({ PutRequest: { Item: { ...item(j), updatedAt: i } } })) } })),
    answer: { UnprocessedItems: {} },
  },
  {
    name: 'BatchGetItem',
    send: (c) => c.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: KEYS } } })),
    answer: { Responses: { [TABLE]: KEYS.map((_, i) => itemValue(item(i))) }, UnprocessedKeys: {} },
  },
];

/** DynamoDB's attribute-value form of a plain item, for the canned answers. */
function marshalled(value: unknown): unknown {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: String(value) };
  if (Array.isArray(value)) return { L: value.map(marshalled) };
  if (typeof value === 'object' && value !== null) return { M: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, marshalled(v)])) };
  throw new Error(`no attribute value for ${String(value)}`);
}

function itemValue(value: Record<string, unknown>): unknown {
  return (marshalled(value) as { M: unknown }).M;
}

/** Answers every request from memory with the answer of its command, as DynamoDB would (status 200, JSON). */
function offlineHandler(): ReturnType<typeof cannedHandler> {
  const answers = new Map(COMMANDS.map((c) => [c.name, Buffer.from(JSON.stringify(c.answer))]));
  const handler = cannedHandler((operation) => ({ body: answers.get(operation) ?? Buffer.from('{}') }));
  handler.keep = false;
  return handler;
}

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function sendMany(client: DynamoDBDocumentClient, send: Send, n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await send(client, next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, CONCURRENCY) }, worker));
}

async function compare(transport: string, clients: { sdk: DynamoDBDocumentClient; table: DynamoDBDocumentClient }): Promise<void> {
  for (const command of COMMANDS) {
    const spent = { sdk: 0, table: 0 };
    // Warm both (JIT, connections, the handler caches) before anything counts.
    for (const c of ONLY_TABLE ? [clients.table] : [clients.sdk, clients.table]) await sendMany(c, command.send, 200);
    const perRound = Math.ceil(REQUESTS / ROUNDS);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['sdk', 'table'] as const) : (['table', 'sdk'] as const);
      for (const which of order.filter((w) => !ONLY_TABLE || w === 'table')) {
        const before = cpuUs();
        await sendMany(clients[which], command.send, perRound);
        spent[which] += cpuUs() - before;
      }
    }
    const n = perRound * ROUNDS;
    const sdk = spent.sdk / n;
    const table = spent.table / n;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'table-client',
        figure: 'cpu_per_request',
        transport,
        command: command.name,
        n,
        concurrency: CONCURRENCY,
        cpu_us_per_request: { sdk_document_client: round(sdk, 1), table_client: round(table, 1) },
        ratio: round(table / sdk, 3),
        load_average_1m: loadAverage(),
      })}\n`,
    );
  }
}

if (TRANSPORTS.includes('offline')) {
  const endpoint = 'http://offline.invalid';
  const sdk = sdkDocumentClient({ endpoint, ...LOCAL });
  const table = createDocumentClient({ endpoint, ...LOCAL });
  for (const c of [sdk, table]) answerFromMemory(c, offlineHandler());
  await compare('offline', { sdk, table });
}

if (TRANSPORTS.includes('dynalite')) {
  const bench = await startBenchTable('process');
  try {
    const sdk = sdkDocumentClient({ endpoint: bench.endpoint, ...LOCAL });
    const table = createDocumentClient({ endpoint: bench.endpoint, ...LOCAL });
    // The items the reads find and the updates change.
    await table.send(new BatchWriteCommand({ RequestItems: { [bench.tableName]: KEYS.map((_, i) => ({ PutRequest: { Item: item(i) } })) } }));
    await table.send(new PutCommand({ TableName: bench.tableName, Item: item(0) }));
    if (bench.tableName !== TABLE) throw new Error(`the bench expects the table ${TABLE}, not ${bench.tableName}`);
    await compare('dynalite', { sdk, table });
    sdk.destroy();
    table.destroy();
  } finally {
    await bench.close();
  }
}
