import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { BatchWriteCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { openDynaliteIterators, repairDynaliteStores } from './dynalite-store.ts';
import { type EmbeddedTable, startEmbeddedTable } from './embedded.ts';

/** A stream that ended closes its iterator a few turns of the event loop after the answer is sent. */
async function settled(baseline: number): Promise<number> {
  for (let turn = 0; turn < 100 && openDynaliteIterators() !== baseline; turn++) await new Promise((resolve) => setImmediate(resolve));
  return openDynaliteIterators();
}

async function readEveryWay(t: EmbeddedTable): Promise<void> {
  const TableName = t.tableName;
  for (let i = 0; i < 30; i++) await t.client.send(new PutCommand({ TableName, Item: { pk: 'P', sk: `s${String(i).padStart(2, '0')}`, v: i } }));
  // Pages cut at their limit (the stream is dropped before its end) and reads that run to the end.
  const page = await t.client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'P' }, Limit: 5 }));
  expect(page.Items).toHaveLength(5);
  const all = await t.client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'P' } }));
  expect(all.Items).toHaveLength(30);
  const none = await t.client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'nothing' } }));
  expect(none.Items).toEqual([]);
  const scanPage = await t.client.send(new ScanCommand({ TableName, Limit: 7 }));
  expect(scanPage.Items).toHaveLength(7);
  const scan = await t.client.send(new ScanCommand({ TableName }));
  expect(scan.Items).toHaveLength(30);
}

describe('dynalite store iterators', () => {
  for (const where of ['in memory', 'under a data folder'] as const) {
    it(`are all closed after queries and scans, ${where}, so no read keeps a snapshot of the data alive`, async () => {
      const t = await startEmbeddedTable(where === 'in memory' ? {} : { path: mkdtempSync(join(tmpdir(), 'table-iterators-')) });
      try {
        const baseline = await settled(openDynaliteIterators());
        await readEveryWay(t);
        expect(await settled(baseline)).toBe(baseline);
      } finally {
        await t.close();
      }
    });
  }
});

interface CapturedStore {
  db: { iterator(options: { keyEncoding: 'buffer'; valueEncoding: 'buffer' }): AsyncIterable<[Buffer, Buffer]> };
}

/** Starts an in-memory table and hands over dynalite's store beside it, to look at what the store keeps. */
async function tableWithItsStore(): Promise<{ t: EmbeddedTable; store: CapturedStore }> {
  repairDynaliteStores();
  const dbModule = createRequire(import.meta.url)('dynalite/db/index.js') as { create: (options: unknown) => CapturedStore };
  const create = dbModule.create;
  let store: CapturedStore | undefined;
  dbModule.create = (options) => (store = create(options));
  try {
    const t = await startEmbeddedTable();
    return { t, store: store! };
  } finally {
    dbModule.create = create;
  }
}

describe('the in-memory store', () => {
  it('keeps each key and value in memory of its own, not as a slice of a pooled slab that other allocations share', async () => {
    const { t, store } = await tableWithItsStore();
    try {
      const TableName = t.tableName;
      for (let i = 0; i < 20; i++) {
        await t.client.send(new PutCommand({ TableName, Item: { pk: 'KEPT', sk: `k${i}`, v: 'k'.repeat(200) } }));
        await t.client.send(new UpdateCommand({ TableName, Key: { pk: 'KEPT', sk: `k${i}` }, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': i } }));
      }
      await t.client.send(new BatchWriteCommand({ RequestItems: { [TableName]: [{ PutRequest: { Item: { pk: 'BATCH', sk: 'b', v: 'b' } } }] } }));
      // A pooled slice (64 KiB slab in Node 24) keeps its whole slab alive as long as the store keeps it.
      const shared: string[] = [];
      let stored = 0;
      for await (const [key, value] of store.db.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
        stored++;
        for (const bytes of [key, value]) if (bytes.buffer.byteLength !== bytes.byteLength) shared.push(key.toString('utf8'));
      }
      expect(stored).toBeGreaterThan(21);
      expect(shared).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
