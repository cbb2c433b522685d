import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { runBounded } from './bounded.ts';
import type { TableRef } from './client.ts';

/**
 * Emptying a partition an earlier key layout wrote (docs/table.md#moving-a-table-written-before-the-shards):
 * its first items read strongly, each handed to a mover, and again until the partition is empty. A
 * mover that leaves its item in place (its conditional delete lost: the item changed since it read
 * it) sees it again in the next page, so a changed item is moved again as it now is.
 */

const PAGE = 100;
const CONCURRENCY = 8;

/** The first items of the old partition, read strongly: what is left to move. */
export function drainPageParams(tableName: string, pk: string): QueryCommandInput {
  return { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true, Limit: PAGE };
}

/**
 * Runs `move` on every item of partition `pk`, eight at a time, until the partition is empty; resolves
 * with how many moves answered true (the deletes this process made). One Query when it is empty already.
 */
export async function drainPartition(t: TableRef, pk: string, move: (item: Record<string, unknown>) => Promise<boolean>): Promise<number> {
  let moved = 0;
  for (;;) {
    const items = (await t.client.send(new QueryCommand(drainPageParams(t.tableName, pk)))).Items ?? [];
    if (items.length === 0) return moved;
    await runBounded(
      items.map((item) => async () => {
        if (await move(item)) moved++;
      }),
      CONCURRENCY,
    );
  }
}
