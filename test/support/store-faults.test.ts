import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../shared/table/core/client.ts';
import { faultyTable, withStoreFaults } from './store-faults.ts';
import { useTestTables } from './table.ts';

const tables = useTestTables();

describe('store fault layer', () => {
  it('applies a fault to the operations, skips and count it is given, then lets everything through', async () => {
    const healthy = await tables.fresh();
    const { table, faults } = await faultyTable(healthy, { maxAttempts: 1 });
    const get = () => table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: 'p', sk: 's' } }));
    const put = () => table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: 'p', sk: 's', v: 1 } }));
    try {
      faults.set({ kind: 'error', name: 'ThrottlingException' }, { only: ['GetItem'], skip: 1, times: 2 });
      await expect(put()).resolves.toBeDefined();
      await expect(get()).resolves.toMatchObject({ Item: { v: 1 } });
      await expect(get()).rejects.toMatchObject({ name: 'ThrottlingException' });
      await expect(get()).rejects.toMatchObject({ name: 'ThrottlingException' });
      await expect(get()).resolves.toMatchObject({ Item: { v: 1 } });
      expect(faults.attempts).toEqual([
        { operation: 'PutItem' },
        { operation: 'GetItem' },
        { operation: 'GetItem', fault: 'error' },
        { operation: 'GetItem', fault: 'error' },
        { operation: 'GetItem' },
      ]);
      expect(faults.injected()).toEqual({ error: 2 });
    } finally {
      await faults.close();
    }
  });

  it('applies a write whose answer it then loses, and leaves the healthy client untouched', async () => {
    const healthy = await tables.fresh();
    const { table, faults } = await faultyTable(healthy, { maxAttempts: 1 });
    try {
      faults.set({ kind: 'lost-answer' });
      await expect(table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: 'p', sk: 's', v: 2 } }))).rejects.toBeDefined();
      expect((await healthy.client.send(new GetCommand({ TableName: healthy.tableName, Key: { pk: 'p', sk: 's' } }))).Item).toMatchObject({ v: 2 });
      faults.set({ kind: 'refuse' });
      await expect(table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: 'p', sk: 's' } }))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await faults.close();
    }
  });

  it('takes the layer off a client it was added to when closed', async () => {
    const healthy = await tables.fresh();
    const endpoint = await healthy.client.config.endpoint?.();
    const upstream = `http://${endpoint?.hostname}:${endpoint?.port}`;
    const client = createDocumentClient({ endpoint: upstream, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' }, maxAttempts: 1 });
    const get = () => client.send(new GetCommand({ TableName: healthy.tableName, Key: { pk: 'p', sk: 's' } }));
    try {
      const faults = await withStoreFaults(client, upstream);
      faults.set({ kind: 'reset' });
      await expect(get()).rejects.toBeDefined();
      await faults.close();
      await expect(get()).resolves.toBeDefined();
      expect(faults.attempts).toHaveLength(1);
    } finally {
      client.destroy();
    }
  });
});
