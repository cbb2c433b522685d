import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { systemClock } from '../../clock.ts';
import type { CapacityMeter } from './capacity.ts';
import { createDocumentClient, type TableRef } from './client.ts';
import { repairDynaliteStores } from './dynalite-store.ts';
import { createTableInput, DEFAULT_TABLE_NAME } from './schema.ts';
import { startTtlSweep, type TtlSweepOptions } from './ttl-sweep.ts';

export interface EmbeddedTableOptions {
  /** Folder holding the data; in memory when absent. */
  path?: string;
  tableName?: string;
  meter?: CapacityMeter;
  /**
   * Listen on loopback TCP (`endpoint`) instead of a private unix socket, so that other processes
   * can share the table: for tests and benchmarks that run drivers as processes of their own. Any
   * local process can then reach the table with any credentials, so `npm start` never does this.
   */
  tcp?: boolean;
  /**
   * Deletes expired items as DynamoDB's TTL would (`ttl-sweep.ts`), on this clock: for the process that
   * owns a long-lived table (`npm start`, the table process of benchmarks and the soak). Tests that
   * store items with made-up expiry times leave it out.
   */
  ttlSweep?: TtlSweepOptions;
  /**
   * Each request waits this long before the table takes it up: for benchmarks that stand the embedded
   * table in for one a network hop away (DynamoDB answers in a few milliseconds, dynalite on loopback
   * in one), to show what a path's serial round trips cost there. `npm start` never sets it.
   */
  requestDelayMs?: number;
}

/**
 * dynalite runs in this very process, so a try that outlives the deployed timeout means a busy event
 * loop, not a lost table: its client waits longer rather than retry writes that are merely late.
 */
export const EMBEDDED_REQUEST_TIMEOUT_MS = 30_000;

export interface EmbeddedTable extends TableRef {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** `http://127.0.0.1:<port>` with `tcp`, for other processes or clients that want the same table; absent otherwise. */
  endpoint: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts dynalite in this process and creates the table if it is not there yet (a data folder from an
 * earlier run keeps its table and items). dynalite checks no credentials, so by default it listens
 * on a unix socket in a folder of its own that only this user may enter (mode 0700), and only this
 * process's client knows where: no other local user reaches the table (docs/table.md, "The embedded
 * table"). With `tcp`, on a free loopback port instead.
 */
export async function startEmbeddedTable(options: EmbeddedTableOptions & { tcp: true }): Promise<EmbeddedTable & { endpoint: string }>;
export async function startEmbeddedTable(options?: EmbeddedTableOptions): Promise<EmbeddedTable>;
export async function startEmbeddedTable(options: EmbeddedTableOptions = {}): Promise<EmbeddedTable> {
  if (options.path !== undefined) mkdirSync(options.path, { recursive: true, mode: 0o700 });
  // Else the table's memory grows with every write for the life of the process.
  repairDynaliteStores();
  const server: Server = dynalite({
    ...(options.path === undefined ? {} : { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  // mkdtemp makes the folder 0700; a socket path must stay short (about 100 bytes), so it is under tmpdir.
  const socketDir = options.tcp === true ? undefined : mkdtempSync(join(tmpdir(), 'vendor-table-'));
  const socketPath = socketDir === undefined ? undefined : join(socketDir, 'table.sock');
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      const listening = () => {
        server.off('error', reject);
        resolve();
      };
      if (socketPath === undefined) server.listen(0, '127.0.0.1', listening);
      else server.listen({ path: socketPath, readableAll: false, writableAll: false }, listening);
    });
  } catch (err) {
    if (socketDir !== undefined) rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }
  const endpoint = socketPath === undefined ? `http://127.0.0.1:${(server.address() as AddressInfo).port}` : undefined;
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const client = createDocumentClient({
    // Through the socket, the host is only what the signature covers.
    endpoint: endpoint ?? 'http://localhost',
    ...(socketPath === undefined ? {} : { socketPath }),
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestTimeoutMs: EMBEDDED_REQUEST_TIMEOUT_MS,
    ...(options.meter === undefined ? {} : { meter: options.meter }),
  });

  let closed = false;
  let sweep: { stop(): Promise<void> } | undefined;
  const requests = trackRequests(server, () => closed, options.requestDelayMs ?? 0);
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await sweep?.stop();
    // dynalite closes its store when the server closes; a request still at work would then throw from
    // inside dynalite ("Database is closed") and take the process down. Requests already taken finish
    // first (for a short while at most); later ones are answered 503 without reaching dynalite.
    await requests.settled(CLOSE_GRACE_MS);
    client.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    if (socketDir !== undefined) rmSync(socketDir, { recursive: true, force: true });
  };

  try {
    await ensureTable(client, tableName);
  } catch (err) {
    await close();
    throw err;
  }
  const table = { client, tableName, endpoint, close };
  if (options.ttlSweep !== undefined) sweep = startTtlSweep(table, options.ttlSweep);
  return table;
}

const CLOSING_ANSWER = '{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailableException","message":"the table is closing"}';

/** How long closing waits for requests dynalite is still working on. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Stands in front of dynalite's request handler: counts the requests it works on (until it ends their
 * response) and turns requests away once `closing()` says so.
 */
function trackRequests(server: Server, closing: () => boolean, delayMs: number): { settled(maxMs: number): Promise<void> } {
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  let working = 0;
  let onIdle: (() => void) | undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing()) {
      res.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' }).end(CLOSING_ANSWER);
      return;
    }
    working++;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (--working === 0) onIdle?.();
    };
    // dynalite ends the response once its store work is done, whether or not the client still listens.
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      finish();
      return end(...args);
    }) as ServerResponse['end'];
    // A request's body is held by the stream until a handler reads it, so it may wait.
    const handle = () => {
      for (const handler of handlers) handler.call(server, req, res);
    };
    if (delayMs === 0) return handle();
    // A request still waiting when the table closes is turned away as a later one is.
    setTimeout(() => (closing() ? res.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' }).end(CLOSING_ANSWER) : handle()), delayMs);
  });
  return {
    settled: (maxMs) =>
      working === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, maxMs);
            onIdle = () => {
              clearTimeout(timer);
              resolve();
            };
          }),
  };
}

/** Creates the table unless it exists, and waits until it is ACTIVE. */
export async function ensureTable(client: DynamoDBDocumentClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let attempt = 0; attempt < 200; attempt++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') return;
    await systemClock.sleep(5);
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
