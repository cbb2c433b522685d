import { Agent, type ClientRequestArgs } from 'node:http';
import { createConnection } from 'node:net';
import type { Duplex } from 'node:stream';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { VendorError } from '../../errors.ts';
import { SST_LINKS, linkedField } from '../../links.ts';
import type { CapacityMeter } from './capacity.ts';
import { TableDocumentClient } from './document-client.ts';
import { useTableJsonSerde } from './json-serde.ts';
import { useTableSerdeSteps } from './serde-steps.ts';
import { TableSha256 } from './sha256.ts';

/** What every entity module needs: a document client and the table's name. */
export interface TableRef {
  client: DynamoDBDocumentClient;
  tableName: string;
}

export interface ClientOptions {
  endpoint?: string;
  /** A unix socket every request goes through instead of the endpoint's host and port (the embedded table). */
  socketPath?: string;
  region?: string;
  credentials?: DynamoDBClientConfig['credentials'];
  /** When given, every command asks for its consumed capacity and the meter adds it up. */
  meter?: CapacityMeter;
  /** Tries of one command, the first included (default `STORE_MAX_ATTEMPTS`). */
  maxAttempts?: number;
  /** Longest wait for a connection to the table (default `STORE_CONNECTION_TIMEOUT_MS`). */
  connectionTimeoutMs?: number;
  /** Longest one try may take, from sending to the whole answer (default `STORE_REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs?: number;
}

/**
 * How long a table command may take before the caller hears that the table is unavailable
 * (docs/table.md, "Timeouts and retries"). The SDK's own defaults wait five minutes for a silent
 * socket, longer than the API may take to answer; these bound one command to about
 * `STORE_MAX_ATTEMPTS * STORE_REQUEST_TIMEOUT_MS` plus the SDK's backoff (at most 3 s when throttled).
 */
export const STORE_MAX_ATTEMPTS = 3;
export const STORE_CONNECTION_TIMEOUT_MS = 1_000;
export const STORE_REQUEST_TIMEOUT_MS = 3_000;

/** Keeps connections alive as the SDK's own agent does, but opens each on a unix socket. */
class SocketAgent extends Agent {
  readonly #path: string;

  constructor(path: string) {
    super({ keepAlive: true, maxSockets: 50 });
    this.#path = path;
  }

  // Returned at once, as the default does: the agent takes a socket returned here and ignores the callback.
  override createConnection(_options: ClientRequestArgs): Duplex {
    return createConnection(this.#path);
  }
}

export function createDocumentClient(options: ClientOptions = {}): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    maxAttempts: options.maxAttempts ?? STORE_MAX_ATTEMPTS,
    // SigV4 as the SDK signs, with HMAC keys made once instead of from raw bytes on every request.
    sha256: TableSha256,
    requestHandler: {
      ...(options.socketPath === undefined ? {} : { httpAgent: new SocketAgent(options.socketPath) }),
      connectionTimeout: options.connectionTimeoutMs ?? STORE_CONNECTION_TIMEOUT_MS,
      requestTimeout: options.requestTimeoutMs ?? STORE_REQUEST_TIMEOUT_MS,
      // Without this the SDK only warns when a try outlives requestTimeout, and keeps waiting.
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logging step filters every request and answer for a logger that discards them (the
  // client is given none): a deep copy of each batch of items, for nothing.
  base.middlewareStack.remove('loggerMiddleware');
  const meter = options.meter;
  if (meter !== undefined) {
    base.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity ??= 'TOTAL';
        const result = await next(args);
        const output = result.output as { ConsumedCapacity?: Parameters<CapacityMeter['record']>[1] };
        meter.record(String(context.commandName ?? '').replace(/Command$/, ''), output.ConsumedCapacity, args.input);
        return result;
      },
      { step: 'initialize', name: 'vendorCapacityMeter' },
    );
  }
  // The SDK's own work per request that gives nothing here, cut as docs/table.md#the-client says: the
  // item operations' JSON, their serde steps' copies of the configuration, the stack resolved per command.
  useTableJsonSerde(base.config.protocol);
  useTableSerdeSteps(base.middlewareStack, base.config as unknown as Parameters<typeof useTableSerdeSteps>[1]);
  return new TableDocumentClient(base);
}

/** Name of the SST link whose injected resource carries the deployed table's name. */
export const SST_TABLE_LINK = SST_LINKS.table;

/**
 * The table of a deployed control plane: the name comes from `VENDOR_TABLE_NAME` or, when the
 * function runs under SST, from the linked resource (`SST_RESOURCE_VendorTable`, JSON with `name`).
 * `VENDOR_DYNAMODB_ENDPOINT` points the client at another DynamoDB-compatible endpoint.
 */
export function tableFromEnv(env: NodeJS.ProcessEnv = process.env, options: Omit<ClientOptions, 'endpoint'> = {}): TableRef {
  const tableName = env.VENDOR_TABLE_NAME ?? linkedTableName(env);
  if (tableName === undefined || tableName === '') {
    throw new VendorError(
      'invalid_input',
      `no table configured: set VENDOR_TABLE_NAME or link the table as ${SST_TABLE_LINK}`,
    );
  }
  const endpoint = env.VENDOR_DYNAMODB_ENDPOINT;
  return {
    tableName,
    client: createDocumentClient({ ...options, ...(endpoint ? { endpoint } : {}) }),
  };
}

function linkedTableName(env: NodeJS.ProcessEnv): string | undefined {
  return linkedField(env, SST_TABLE_LINK, 'name');
}
