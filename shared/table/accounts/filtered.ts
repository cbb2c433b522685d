/**
 * The account list when it is filtered by what an account is (state, zone, source) rather than by
 * name: each account item is read, in name order, and judged by the caller's `keep`. These reads cost
 * the whole account partition (or the part of it with a name prefix), not a page: see
 * docs/benchmarks.md for what that costs.
 */
import type { AccountRecord } from '../../accounts/model.ts';
import type { TableRef } from '../core/client.ts';
import { PK } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { accountFromItem } from './records.ts';

/** Every account whose name starts with `prefix` (every account without one), in name order. */
export async function accountsWithPrefix(t: TableRef, prefix?: string): Promise<AccountRecord[]> {
  const items = await queryAll(t, {
    TableName: t.tableName,
    KeyConditionExpression: prefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': PK.account, ...(prefix === undefined ? {} : { ':prefix': prefix }) },
  });
  return items.map(accountFromItem);
}
