import type { AccountRecord, Definition } from '../../accounts/model.ts';
import { batchWriteAll } from '../core/batch.ts';
import { runBounded } from '../core/bounded.ts';
import type { TableRef } from '../core/client.ts';
import { newAccessEntryItem } from '../accounts/access.ts';
import { createAccount, newAccountRecord } from '../accounts/records.ts';

/**
 * Creates the account items of names new to a source, each holding that source's definition alone.
 *
 * The item's put keeps its condition (the item must not exist): other sources (an agent announcing its
 * static accounts, a configuration server or plugin synced by another replica) hold locks of their own
 * and may create the same name at any moment, and a plain put would drop their definition while their
 * membership hash says it is stored, so their next sync would never write it again. These puts go at
 * most `concurrency` at once. A name whose item exists already is answered in `existing`, for the
 * write that adds one definition to an item.
 *
 * The access entries of the created items go as plain puts, 25 to a BatchWriteItem: a new item starts
 * its versions at 1, so its entry replaces whatever an earlier account of that name left, as
 * `putNewAccessEntry` does one at a time.
 */
export async function createSourceAccounts(
  t: TableRef,
  sourceId: string,
  defs: ReadonlyMap<string, Definition>,
  now: number,
  concurrency: number,
): Promise<{ created: AccountRecord[]; existing: string[] }> {
  const created: AccountRecord[] = [];
  const existing: string[] = [];
  await runBounded(
    [...defs].map(([name, def]) => async () => {
      if (await createAccount(t, name, now, { [sourceId]: def })) created.push({ ...newAccountRecord(name, now), defs: { [sourceId]: def } });
      else existing.push(name);
    }),
    concurrency,
  );
  const entries = created.flatMap((record) => {
    const item = newAccessEntryItem(record);
    return item === undefined ? [] : [{ PutRequest: { Item: item } }];
  });
  await batchWriteAll(t, entries, concurrency);
  return { created, existing };
}
