/** The builders of each account's operation entries (by-account.ts), apart so the operation store can write them. */
import type { PutCommandInput, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { OperationRecord } from '../../operations/model.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { accountOperationKey, accountOperationsPk } from './keys.ts';

/**
 * The entry an operation gets in its account's list; a plain put, so a retry writes the same item. It
 * expires with its operation (the same `expiresAtSeconds`), and goes earlier with the account's data
 * (the cleanup of `../resources/cleanup.ts`).
 */
export function putAccountOperationParams(tableName: string, record: Pick<OperationRecord, 'id' | 'account' | 'createdAt'>, expiresAtSeconds: number): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...accountOperationKey(record.account, record.createdAt, record.id), id: record.id, [TTL_ATTRIBUTE]: expiresAtSeconds },
  };
}

/** The account's entries newest first, after the position `after` (an entry's sort key) when given. */
export function accountOperationsParams(tableName: string, account: string, limit: number, after?: string): QueryCommandInput {
  const pk = accountOperationsPk(account);
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ScanIndexForward: false,
    Limit: limit,
    ...(after === undefined ? {} : { ExclusiveStartKey: { pk, sk: after } }),
  };
}

