import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import type { CapacityMeter } from './capacity.ts';
import { createDocumentClient, type TableRef } from './client.ts';
import { createTableInput, DEFAULT_TABLE_NAME } from './schema.ts';

export interface EmbeddedTableOptions {
  /** Folder holding the data; in memory when absent. */
  path?: string;
  tableName?: string;
  meter?: CapacityMeter;
}

/**
 * dynalite runs in this very process, so a try that outlives the deployed timeout means a busy event
 * loop, not a lost table: its client waits longer rather than retry writes that are merely late.
 */
export const EMBEDDED_REQUEST_TIMEOUT_MS = 30_000;

export interface EmbeddedTable extends TableRef {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** `http://127.0.0.1:<port>`, for other processes or clients that want the same table. */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite in this process on a free loopback port and creates the table if it is not there
 * yet (a data folder from an earlier run keeps its table and items).
 */
export async function startEmbeddedTable(options: EmbeddedTableOptions = {}): Promise<EmbeddedTable> {
  if (options.path !== undefined) mkdirSync(options.path, { recursive: true });
  const server: Server = dynalite({
    ...(options.path === undefined ? {} : { path: options.path }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const client = createDocumentClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestTimeoutMs: EMBEDDED_REQUEST_TIMEOUT_MS,
    ...(options.meter === undefined ? {} : { meter: options.meter }),
  });

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    client.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  };

  try {
    await ensureTable(client, tableName);
  } catch (err) {
    await close();
    throw err;
  }
  return { client, tableName, endpoint, close };
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
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
