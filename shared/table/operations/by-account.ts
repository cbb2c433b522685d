/**
 * Each account's operations in creation order (docs/table.md, "Operations"): one small entry per
 * operation in the account's own partition (`OPACCOUNT#<account>`, sorted by `<createdAt>#<id>`),
 * written with the operation and expiring with it. Operation ids are hashes, so the operation
 * partitions themselves have no useful order; a page of the newest operations is one Query of the entries
 * and one batch read of the operations they name.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { OperationRecord, OperationState } from '../../operations/model.ts';
import { batchGet } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { accountOperationsParams } from './account-entries.ts';
import { padMs } from '../accounts/keys.ts';
import { operationKey } from './keys.ts';
import { operationFromItem } from './operations.ts';

/** The sort key of an entry, as a page's position: 13 digits of ms, `#`, an operation id. */
export const ACCOUNT_OPERATION_POSITION = /^[0-9]{13}#[0-9a-f]{32}$/;

/**
 * Entries looked at in one request at most, whatever the filter: with a `state` that few operations
 * have, a page may come back short, with `next` to go on from, rather than read the whole history.
 */
export const MAX_ENTRIES_PER_PAGE = 1000;

export interface AccountOperationPage {
  records: OperationRecord[];
  /** Where the next page starts (an entry's sort key); absent when the list has no more. */
  next?: string;
}

/**
 * One page of the account's operations, newest first, only those in `states` when given. Reads the
 * entries a Query page at a time and the operations they name by key, until `limit` match, the list
 * ends, or `MAX_ENTRIES_PER_PAGE` entries were looked at.
 */
export async function listAccountOperations(
  t: TableRef,
  account: string,
  options: { limit: number; after?: string; states?: ReadonlySet<OperationState> },
): Promise<AccountOperationPage> {
  const records: OperationRecord[] = [];
  let position = options.after;
  let looked = 0;
  for (;;) {
    const want = Math.min(options.limit - records.length, MAX_ENTRIES_PER_PAGE - looked);
    const out = await t.client.send(new QueryCommand(accountOperationsParams(t.tableName, account, want, position)));
    const entries = (out.Items ?? []).map((item) => ({ sk: item.sk as string, id: item.id as string }));
    looked += entries.length;
    const items = await batchGet(t, entries.map((e) => e.id), (ids) => ({ RequestItems: { [t.tableName]: { Keys: ids.map(operationKey) } } }), 'the table keeps throttling operation reads');
    const byId = new Map(items.map((item) => operationFromItem(item)).map((r) => [r.id, r]));
    for (const entry of entries) {
      const record = byId.get(entry.id);
      // Entries without their operation (its put failed; past retention) or of another time (a replayed
      // request's, until it removes it) are not the list's.
      const own = record !== undefined && record.account === account && entry.sk.startsWith(`${padMs(record.createdAt)}#`);
      if (own && (options.states === undefined || options.states.has(record.state))) records.push(record);
      position = entry.sk;
    }
    const more = out.LastEvaluatedKey !== undefined;
    if (!more) return { records };
    if (records.length >= options.limit || looked >= MAX_ENTRIES_PER_PAGE) return { records, ...(position === undefined ? {} : { next: position }) };
  }
}
