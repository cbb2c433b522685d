import { describe, expect, it } from 'vitest';
import { tableFromEnv } from './client.ts';
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
