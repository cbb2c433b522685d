import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import { everyOperationItem } from '../../../test/support/sharded-items.ts';
import { compress, createOperation, getOperation, OPERATION_RETENTION_MS, type NewOperation } from '../operations/operations.ts';
import { BATCH_WRITE_LIMIT, batchWrite } from './batch.ts';
import type { TableRef } from './client.ts';
import { startEmbeddedTable, type EmbeddedTable } from './embedded.ts';
import { TTL_ATTRIBUTE } from './schema.ts';
import { sweepExpiredItems, TTL_SWEEP_PAGE } from './ttl-sweep.ts';

const NOW = 1_800_000_000_000;
const request = { action: 'scale' as const, targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' }], replicas: 3 };

function operation(key: string, now: number): NewOperation {
  return { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: `hash-${key}`, request: compress(request), record: { action: 'scale', objects: 1 }, now };
}

async function countOf(t: TableRef, pk: string): Promise<number> {
  const out = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Select: 'COUNT' }));
  return out.Count ?? 0;
}

async function operationCount(t: TableRef): Promise<number> {
  return (await everyOperationItem(t)).length;
}

let table: EmbeddedTable | undefined;
afterEach(async () => {
  await table?.close();
  table = undefined;
});

describe('expiry on the embedded table (docs/table.md#expiry-on-the-embedded-table)', () => {
  it("deletes operations past their retention on the owner's clock and keeps live ones", async () => {
    const clock = new ManualClock(NOW);
    table = await startEmbeddedTable({ ttlSweep: { clock, intervalMs: 60_000 } });
    const t = table;
    const old = NOW - OPERATION_RETENTION_MS - 1000;
    const expired = await Promise.all(Array.from({ length: 30 }, (_, i) => createOperation(t, operation(`old-${i}`, old))));
    const live = await Promise.all([createOperation(t, operation('live-1', NOW)), createOperation(t, operation('live-2', old + 5 * 60_000))]);
    // Not a number of seconds: DynamoDB's TTL leaves such items alone, and so does the sweep.
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'OTHER', sk: 'text', [TTL_ATTRIBUTE]: '1' } }));
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'OTHER', sk: 'none' } }));
    expect(await operationCount(t)).toBe(32);

    await clock.advance(60_000);
    await vi.waitFor(async () => expect(await operationCount(t)).toBe(2), { timeout: 10_000 });
    for (const { record } of expired.slice(0, 3)) expect(await getOperation(t, record.id)).toBeUndefined();
    for (const { record } of live) expect(await getOperation(t, record.id)).toBeDefined();
    expect(await countOf(t, 'OTHER')).toBe(2);

    // Five minutes on, the second one's retention has passed too.
    await clock.advance(5 * 60_000);
    await vi.waitFor(async () => expect(await operationCount(t)).toBe(1), { timeout: 10_000 });
    expect(await getOperation(t, live[0].record.id)).toBeDefined();
  });

  it('sweeps a table larger than one scan page, and answers how many items went', async () => {
    table = await startEmbeddedTable();
    const t = table;
    const expiresAt = Math.floor(NOW / 1000) - 1;
    const items = Array.from({ length: TTL_SWEEP_PAGE + 120 }, (_, i) => ({ pk: 'EXPIRED', sk: String(i).padStart(4, '0'), [TTL_ATTRIBUTE]: expiresAt }));
    for (let i = 0; i < items.length; i += BATCH_WRITE_LIMIT) {
      await batchWrite(t, { RequestItems: { [t.tableName]: items.slice(i, i + BATCH_WRITE_LIMIT).map((Item) => ({ PutRequest: { Item } })) } });
    }
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'LIVE', sk: 'x', [TTL_ATTRIBUTE]: expiresAt + 2 } }));
    expect(await sweepExpiredItems(t, NOW)).toBe(items.length);
    const left = await t.client.send(new ScanCommand({ TableName: t.tableName }));
    expect(left.Items?.map((i) => i.pk)).toEqual(['LIVE']);
  });
});
