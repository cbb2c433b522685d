/**
 * Store faults for tests: a DynamoDB client whose every try goes through a fault proxy on loopback,
 * so a test can make the table stop answering, answer slowly, throttle, fail or drop connections,
 * and the SDK's real timeouts, retries and error parsing decide what the code under test sees.
 *
 *   const { table, faults } = await faultyTable(healthyTable, { requestTimeoutMs: 200 });
 *   const app = createApp({ table, ... });          // the code under test uses `table`
 *   faults.set({ kind: 'error', name: 'ThrottlingException' });
 *   faults.set({ kind: 'hang' }, { only: ['UpdateItem'], skip: 2, times: 5 });
 *   faults.clear();                                 // the store is back
 *   faults.attempts                                 // every try: { operation, fault }
 *   await faults.close();
 *
 * Keep checking results through the healthy table's own client: it never sees a fault.
 *
 * `withStoreFaults(client, upstream)` adds the same layer to a client built elsewhere (for example
 * the table client a driver under test was given; its `close()` takes the layer off again, and the
 * client goes straight to the table); `faultyTable` builds a fresh client with
 * `createDocumentClient` (the product's retry and timeout settings, unless overridden) for the same
 * table. The layer is an SDK middleware at the `finalizeRequest` step, inside the SDK's retry loop:
 * each try picks the fault in force at that moment and tells the proxy in a header.
 *
 * Faults:
 * - `hang`: the store takes the request and never answers (the SDK's requestTimeout ends the try);
 * - `slow`: the store answers after `ms`, and applies the request even when the client has given up;
 * - `error`: an answer with a DynamoDB error body, as DynamoDB sends it: `name` such as
 *   `ProvisionedThroughputExceededException`, `ThrottlingException`, `RequestLimitExceeded` (400) or
 *   `InternalServerError` (500); `status` and a raw `body` (a gateway's HTML page) may be given;
 * - `reset`: the connection is dropped before any answer (nothing is applied);
 * - `lost-answer`: the request is applied, then the connection is dropped instead of the answer;
 * - `refuse`: nothing listens (connection refused).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, type ClientOptions, type TableRef } from '../../shared/table/core/client.ts';

export type StoreFault =
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number }
  | { kind: 'error'; name: string; status?: number; body?: string }
  | { kind: 'reset' }
  | { kind: 'lost-answer' }
  | { kind: 'refuse' };

export interface FaultScope {
  /** DynamoDB operations (`GetItem`, `UpdateItem`, `Query`, ...) the fault applies to; all when absent. */
  only?: readonly string[];
  /** Let this many matching tries through first. */
  skip?: number;
  /** Apply to this many matching tries, then let everything through again; for ever when absent. */
  times?: number;
}

export interface StoreAttempt {
  /** DynamoDB operation, from the request's `X-Amz-Target`. */
  operation: string;
  /** The fault applied to this try, if any. */
  fault?: StoreFault['kind'];
}

export interface StoreFaults {
  set(fault: StoreFault, scope?: FaultScope): void;
  /** The store answers normally again. */
  clear(): void;
  /** Every try that went through the layer, in order. */
  readonly attempts: StoreAttempt[];
  /** How many tries had a fault applied, by kind. */
  injected(): Record<string, number>;
  close(): Promise<void>;
}

const FAULT_HEADER = 'x-vendor-test-fault';
const MIDDLEWARE_NAME = 'vendorTestStoreFaults';
const DYNAMODB_ERROR_PREFIX = 'com.amazonaws.dynamodb.v20120810#';

interface Active {
  fault: StoreFault;
  only: Set<string> | undefined;
  skip: number;
  times: number;
}

function operationOf(headers: Record<string, string>): string {
  const target = Object.entries(headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1] ?? '';
  return target.slice(target.indexOf('.') + 1);
}

/** A port nothing listens on (bound, then closed at once). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Adds the fault layer to `client`, whose requests go to `upstream` (`http://host:port`). */
export async function withStoreFaults(client: DynamoDBDocumentClient, upstream: string): Promise<StoreFaults> {
  const proxy = await startFaultProxy(new URL(upstream));
  const refusedPort = await closedPort();
  const attempts: StoreAttempt[] = [];
  let active: Active | undefined;

  const pick = (operation: string): StoreFault | undefined => {
    const a = active;
    if (a === undefined || (a.only !== undefined && !a.only.has(operation))) return undefined;
    if (a.skip > 0) {
      a.skip--;
      return undefined;
    }
    if (a.times <= 0) return undefined;
    a.times--;
    return a.fault;
  };

  client.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { hostname: string; port?: number; protocol: string; headers: Record<string, string> };
      const operation = operationOf(req.headers);
      const fault = pick(operation);
      attempts.push({ operation, ...(fault === undefined ? {} : { fault: fault.kind }) });
      req.protocol = 'http:';
      req.hostname = '127.0.0.1';
      req.port = fault?.kind === 'refuse' ? refusedPort : proxy.port;
      if (fault !== undefined && fault.kind !== 'refuse') req.headers[FAULT_HEADER] = JSON.stringify(fault);
      else delete req.headers[FAULT_HEADER];
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: MIDDLEWARE_NAME },
  );

  return {
    set(fault, scope = {}) {
      active = {
        fault,
        only: scope.only === undefined ? undefined : new Set(scope.only),
        skip: scope.skip ?? 0,
        times: scope.times ?? Number.POSITIVE_INFINITY,
      };
    },
    clear() {
      active = undefined;
    },
    attempts,
    injected() {
      const counts: Record<string, number> = {};
      for (const a of attempts) if (a.fault !== undefined) counts[a.fault] = (counts[a.fault] ?? 0) + 1;
      return counts;
    },
    // The client goes straight to the table again.
    close: async () => {
      client.middlewareStack.remove(MIDDLEWARE_NAME);
      await proxy.close();
    },
  };
}

/**
 * A second client for `table` (same endpoint and table name) behind the fault layer. `options`
 * override the product's client settings, typically shorter timeouts so that tests of a silent
 * store finish quickly; the retry count stays the product's unless given.
 */
export async function faultyTable(table: TableRef, options: ClientOptions = {}): Promise<{ table: TableRef; faults: StoreFaults }> {
  const endpoint = await table.client.config.endpoint?.();
  if (endpoint === undefined) throw new Error('the table client has no endpoint to proxy');
  const upstream = `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port ?? 80}`;
  const client = createDocumentClient({
    endpoint: upstream,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...options,
  });
  const faults = await withStoreFaults(client, upstream);
  return {
    table: { client, tableName: table.tableName },
    faults: {
      ...faults,
      attempts: faults.attempts,
      close: async () => {
        client.destroy();
        await faults.close();
      },
    },
  };
}

interface FaultProxy {
  port: number;
  close(): Promise<void>;
}

/** Forwards to `upstream`, or misbehaves as the request's fault header says. */
async function startFaultProxy(upstream: URL): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const forward = (req: IncomingMessage, body: Buffer, answer: (status: number, headers: IncomingMessage['headers'], data: Buffer) => void, failed: () => void) => {
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: upstream.host };
    delete headers[FAULT_HEADER];
    const out = httpRequest({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => answer(res.statusCode ?? 502, res.headers, Buffer.concat(chunks)));
      res.on('error', failed);
    });
    out.on('error', failed);
    out.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const raw = req.headers[FAULT_HEADER];
    const fault = typeof raw === 'string' ? (JSON.parse(raw) as StoreFault) : undefined;
    const reply = (status: number, headers: IncomingMessage['headers'], data: Buffer) => {
      if (res.destroyed) return;
      const { 'transfer-encoding': _te, connection: _c, ...rest } = headers;
      res.writeHead(status, { ...rest, 'content-length': String(data.length) });
      res.end(data);
    };
    const drop = () => res.socket?.destroy();
    switch (fault?.kind) {
      case undefined:
        return forward(req, body, reply, drop);
      case 'hang':
        return; // the socket stays open and silent until the client or close() ends it
      case 'reset':
        return drop();
      case 'lost-answer':
        return forward(req, body, drop, drop);
      case 'slow': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!closing) forward(req, body, reply, drop);
        }, fault.ms);
        timers.add(timer);
        return;
      }
      case 'error': {
        const status = fault.status ?? (fault.name === 'InternalServerError' ? 500 : 400);
        const data = fault.body ?? JSON.stringify({ __type: `${DYNAMODB_ERROR_PREFIX}${fault.name}`, message: `injected ${fault.name}` });
        const type = fault.body === undefined ? 'application/x-amz-json-1.0' : 'text/html';
        return reply(status, { 'content-type': type, 'x-amzn-requestid': 'injected-fault' }, Buffer.from(data));
      }
      case 'refuse':
        return drop();
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
