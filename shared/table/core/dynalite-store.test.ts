import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { openDynaliteIterators } from './dynalite-store.ts';
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

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Memory in ArrayBuffers (Buffers) after a full collection: what is still referenced. */
function arrayBufferBytes(): number {
  collectGarbage();
  return process.memoryUsage().arrayBuffers;
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

describe('the in-memory store', () => {
  it('keeps items in memory of their own, not in pooled slabs that other allocations shared', async () => {
    const t = await startEmbeddedTable();
    try {
      const TableName = t.tableName;
      const before = arrayBufferBytes();
      const kept = 150;
      for (let i = 0; i < kept; i++) {
        await t.client.send(new PutCommand({ TableName, Item: { pk: 'KEPT', sk: `k${i}`, v: 'k'.repeat(200) } }));
        // Short-lived allocations between two kept items, as a busy table has: an overwrite and a read.
        await t.client.send(new PutCommand({ TableName, Item: { pk: 'CHURN', sk: 'c', v: 'c'.repeat(2000), i } }));
        await t.client.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'CHURN' }, Limit: 1 }));
      }
      const perItem = (arrayBufferBytes() - before) / kept;
      // An item is about 300 bytes as stored; a pooled slab is 64 KiB (Node 24), 8 KiB in older Node.
      expect(perItem).toBeLessThan(4096);
    } finally {
      await t.close();
    }
  });
});
