import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { faultyTable } from '../../../test/support/store-faults.ts';
import { useTestTables } from '../../../test/support/table.ts';
import { createDocumentClient, STORE_MAX_ATTEMPTS, tableFromEnv } from './client.ts';
import { createTableInput } from './schema.ts';

describe('tableFromEnv', () => {
  it('takes the name from VENDOR_TABLE_NAME, else from the SST link', () => {
    expect(tableFromEnv({ VENDOR_TABLE_NAME: 'plain', AWS_REGION: 'eu-west-1' }).tableName).toBe('plain');
    const linked = tableFromEnv({ SST_RESOURCE_VendorTable: JSON.stringify({ name: 'app-stage-VendorTable-x', type: 'sst.aws.Dynamo' }), AWS_REGION: 'eu-west-1' });
    expect(linked.tableName).toBe('app-stage-VendorTable-x');
  });

  it('refuses to start without a table name, or with a broken link', () => {
    expect(() => tableFromEnv({})).toThrow(/VENDOR_TABLE_NAME/);
    expect(() => tableFromEnv({ SST_RESOURCE_VendorTable: '{' })).toThrow(/not JSON/);
  });
});

describe('createTableInput', () => {
  it('declares string keys pk and sk and no secondary indexes', () => {
    const input = createTableInput('t');
    expect(input.AttributeDefinitions).toEqual([
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ]);
    expect(input.GlobalSecondaryIndexes).toBeUndefined();
  });
});

describe('timeouts and retries of the table client', () => {
  const tables = useTestTables();

  it('tries each command STORE_MAX_ATTEMPTS times', async () => {
    expect(await createDocumentClient({ region: 'local' }).config.maxAttempts()).toBe(STORE_MAX_ATTEMPTS);
  });

  // The SDK's own default would wait five minutes for this answer: past the test's limit.
  it('gives up on a table that does not answer after its request timeout', async () => {
    const { table, faults } = await faultyTable(await tables.fresh(), { maxAttempts: 1 });
    try {
      faults.set({ kind: 'hang' });
      await expect(table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: 'a', sk: 'b' } }))).rejects.toMatchObject({ name: 'TimeoutError' });
    } finally {
      await faults.close();
    }
  });
});
