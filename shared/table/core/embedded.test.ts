import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { unixSocketsOf } from '../../../test/support/sockets.ts';
import { writeResources } from '../resources/objects.ts';
import { batchWrite } from './batch.ts';
import { CapacityMeter } from './capacity.ts';
import { createDocumentClient } from './client.ts';
import { startEmbeddedTable } from './embedded.ts';

describe('startEmbeddedTable', () => {
  it('serves the table with the pk/sk key schema on a private socket, or with tcp on loopback', async () => {
    for (const tcp of [false, true]) {
      const t = await startEmbeddedTable({ tcp });
      try {
        if (tcp) expect(t.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        else expect(t.endpoint).toBeUndefined();
        const d = await t.client.send(new DescribeTableCommand({ TableName: t.tableName }));
        expect(d.Table?.KeySchema).toEqual([
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ]);
      } finally {
        await t.close();
      }
    }
  });

  it('listens on a socket in a folder only this user may enter, removed when it closes', async () => {
    const before = new Set(unixSocketsOf(process.pid));
    const t = await startEmbeddedTable();
    const [socket, ...more] = unixSocketsOf(process.pid).filter((s) => !before.has(s));
    expect(more).toEqual([]);
    expect(socket).toMatch(/table\.sock$/);
    const folder = dirname(socket!);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(folder).uid).toBe(process.getuid?.());
    await t.close();
    expect(existsSync(folder)).toBe(false);
  });

  it('keeps items on disk across a restart on the same folder', async () => {
    const path = mkdtempSync(join(tmpdir(), 'table-'));
    const first = await startEmbeddedTable({ path });
    await first.client.send(new PutCommand({ TableName: first.tableName, Item: { pk: 'p', sk: 's', v: 1 } }));
    await first.close();
    const second = await startEmbeddedTable({ path });
    try {
      const got = await second.client.send(new GetCommand({ TableName: second.tableName, Key: { pk: 'p', sk: 's' } }));
      expect(got.Item).toEqual({ pk: 'p', sk: 's', v: 1 });
    } finally {
      await second.close();
    }
  });

  it('meters consumed capacity of every command', async () => {
    const meter = new CapacityMeter();
    const t = await startEmbeddedTable({ meter });
    try {
      await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'p', sk: 's', blob: 'x'.repeat(3000) } }));
      await t.client.send(new GetCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 's' }, ConsistentRead: true }));
      // A 3 KB item costs 3 write units and 1 strongly consistent read unit (DynamoDB's 1 KB / 4 KB rules).
      expect(meter.snapshot()).toMatchObject({ writeUnits: 3, readUnits: 1 });
    } finally {
      await t.close();
    }
  });

  it('tells the write units of each kind of partition apart', async () => {
    const meter = new CapacityMeter();
    const t = await startEmbeddedTable({ meter });
    try {
      await writeResources(t, 'acct', [{ op: 'put', ref: { group: '', kind: 'configmap', namespace: 'ns', name: 'a' }, resourceVersion: '1', object: 'x'.repeat(1500), at: 1 }]);
      await batchWrite(t, { RequestItems: { [t.tableName]: [{ PutRequest: { Item: { pk: 'SCOPE#acct', sk: 'progress' } } }] } });
      await batchWrite(t, { RequestItems: { [t.tableName]: [{ PutRequest: { Item: { pk: 'SCOPE#acct', sk: 'a' } } }, { PutRequest: { Item: { pk: 'RESOURCE#acct', sk: 'b' } } }] } });
      await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'SESSION#x', sk: 's' } }));
      // bench/cache.ts counts the objects' writes by their partition (a 1.5 KB object: 2 units).
      expect(Object.fromEntries(meter.writeUnitsByPartition)).toEqual({ RESOURCE: 2, SCOPE: 1, mixed: 2, SESSION: 1 });
      expect(meter.writeUnits).toBe(6);
    } finally {
      await t.close();
    }
  });
  it('closes while another client is writing without failing inside the table', async () => {
    const t = await startEmbeddedTable({ tcp: true });
    // Another process's client, as a driver's: it keeps writing while the table closes under it.
    const other = createDocumentClient({ endpoint: t.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      let firstWritten!: () => void;
      const someWritten = new Promise<void>((resolve) => (firstWritten = resolve));
      const writes = Array.from({ length: 200 }, (_, i) =>
        other.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'p', sk: `s${i}`, blob: 'x'.repeat(2_000) } })).then(
          () => (firstWritten(), 'written'),
          (e: Error) => e.name,
        ),
      );
      // The table closes while the rest are on their way or at work.
      await someWritten;
      await t.close();
      const outcomes = await Promise.all(writes);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(uncaught.map(String)).toEqual([]);
      expect(outcomes).toContain('written');
    } finally {
      process.off('uncaughtException', onUncaught);
      other.destroy();
    }
  });

  it('holds each request back by requestDelayMs, and turns away one still held when it closes', async () => {
    const t = await startEmbeddedTable({ tcp: true, requestDelayMs: 300 });
    const other = createDocumentClient({ endpoint: t.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    try {
      // Timers of one process fire in the order they are due: this one is due first.
      const timer = new Promise((resolve) => setTimeout(() => resolve('timer'), 100));
      const put = other.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'p', sk: 'delayed' } })).then(() => 'answer');
      expect(await Promise.race([put, timer])).toBe('timer');
      expect(await put).toBe('answer');
      expect((await other.send(new GetCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 'delayed' } }))).Item).toEqual({ pk: 'p', sk: 'delayed' });
      const late = other.send(new GetCommand({ TableName: t.tableName, Key: { pk: 'p', sk: 'delayed' } })).then(
        () => 'answer',
        (e: Error) => e.name,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await t.close();
      expect(await late).toBe('ServiceUnavailableException');
    } finally {
      other.destroy();
    }
  });
});
