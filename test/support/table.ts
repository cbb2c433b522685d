import { afterAll, beforeAll } from 'vitest';
import { ensureTable, startEmbeddedTable, type EmbeddedTable } from '../../shared/table/core/embedded.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { CapacityMeter } from '../../shared/table/core/capacity.ts';

/**
 * One dynalite per test file, and a fresh table per test from it, so tests never see each other's
 * items and the file pays for one server start.
 */
export class TestTables {
  #server: (EmbeddedTable & { endpoint: string }) | undefined;
  #count = 0;
  readonly meter = new CapacityMeter();

  async start(): Promise<void> {
    // Over loopback TCP: driver processes and the store-fault proxy (test/support/store-faults.ts) reach it by address.
    this.#server = await startEmbeddedTable({ meter: this.meter, tcp: true });
  }

  async fresh(): Promise<TableRef> {
    const server = this.#server;
    if (server === undefined) throw new Error('start() first');
    const tableName = `test${this.#count++}`;
    await ensureTable(server.client, tableName);
    return { client: server.client, tableName };
  }

  /** `http://127.0.0.1:<port>` of the dynalite, for processes that share it. */
  get endpoint(): string {
    if (this.#server === undefined) throw new Error('start() first');
    return this.#server.endpoint;
  }

  async close(): Promise<void> {
    await this.#server?.close();
  }
}

/** The tables of the enclosing file or `describe`: the dynalite starts before its tests and stops after them. */
export function useTestTables(): TestTables {
  const tables = new TestTables();
  beforeAll(() => tables.start());
  afterAll(() => tables.close());
  return tables;
}
