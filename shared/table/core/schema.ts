import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The one table of the control plane. Every entity lives in it under string keys `pk` and `sk`
 * (see docs/table.md for the key layout). The same input creates the embedded table and is what
 * the deployment's table definition is checked against, so the two cannot drift apart.
 */
export const TABLE_KEYS = { partition: 'pk', sort: 'sk' } as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sort, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/**
 * The TTL attribute (seconds): real DynamoDB deletes items past it; the embedded table's owner sweeps them
 * (`ttl-sweep.ts`), as dynalite has no TTL.
 */
export const TTL_ATTRIBUTE = 'expiresAt';

export const DEFAULT_TABLE_NAME = 'vendor';
