import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './client.ts';
import { queryAll } from './query.ts';

/**
 * Reads of one sorted space spread over several partitions (docs/table.md#where-the-writes-land):
 * one Query per partition, sent together, merged by sort key. Sort keys never repeat across the
 * partitions (each is a name, or holds one, and a name has one partition).
 */

type Item = Record<string, unknown>;

/** One partition's page of a sharded read. */
export interface ShardPage {
  /** Its items, in sort-key order. */
  items: readonly Item[];
  /** Set when the page was cut (at its limit, or at 1 MB): past this sort key the partition may hold items not read. */
  cutAt?: string;
}

const bySortKey = (a: Item, b: Item): number => ((a.sk as string) < (b.sk as string) ? -1 : (a.sk as string) > (b.sk as string) ? 1 : 0);

/** A merged page: its items, whether items may follow, and the sort key to read on after. */
export interface MergedPage {
  items: Item[];
  more: boolean;
  /** Every item up to this sort key has been read (the last item's, or the lowest cut); undefined when nothing was. */
  after: string | undefined;
}

/**
 * The partitions' pages as one page in sort-key order: only the items up to the lowest sort key at
 * which a page was cut (past it, that partition may hold items not read yet, which would belong
 * between the others), and at most `limit`. `more` is true when items may follow; a reader that goes
 * on after `after` reads every item once, in order.
 */
export function mergeShardPages(pages: readonly ShardPage[], limit: number): MergedPage {
  let frontier: string | undefined;
  for (const page of pages) if (page.cutAt !== undefined && (frontier === undefined || page.cutAt < frontier)) frontier = page.cutAt;
  const merged = pages
    .flatMap((page) => page.items)
    .filter((item) => frontier === undefined || (item.sk as string) <= frontier)
    .sort(bySortKey);
  const items = merged.slice(0, limit);
  const full = merged.length > limit;
  const after = full || frontier === undefined ? (items.at(-1)?.sk as string | undefined) : frontier;
  return { items, more: frontier !== undefined || full, after };
}

/** One partition's page as the merge takes it: cut when the table says there is more, or when it filled `limit`. */
export function shardPageOf(items: readonly Item[], lastEvaluatedKey: Item | undefined, limit: number): ShardPage {
  const cutAt = (lastEvaluatedKey?.sk as string | undefined) ?? (items.length >= limit ? (items.at(-1)?.sk as string | undefined) : undefined);
  return cutAt === undefined ? { items } : { items, cutAt };
}

/**
 * What each of `shards` partitions is asked for when a page of `limit` is wanted: its share and half
 * again, and a few more, so the merged page is nearly always full in one round (a hash spreads 100
 * names over 8 partitions 12.5 ± 3.3 each) without reading every partition's `limit`, which would read
 * up to `shards` times the page. A round that falls short says `more`, and the reader goes on.
 */
export function shardLimit(limit: number, shards: number): number {
  return Math.max(1, Math.min(limit, Math.ceil((1.5 * limit) / shards) + 4));
}

/**
 * One page of a sharded read: `inputs` (one Query per partition, each with its `Limit`) sent together
 * and merged, at most `limit` items.
 */
export async function queryShards(t: TableRef, inputs: readonly QueryCommandInput[], limit: number): Promise<MergedPage> {
  const pages = await Promise.all(
    inputs.map(async (input) => {
      const out = await t.client.send(new QueryCommand(input));
      return shardPageOf(out.Items ?? [], out.LastEvaluatedKey, input.Limit ?? Number.POSITIVE_INFINITY);
    }),
  );
  return mergeShardPages(pages, limit);
}

/** Every item of every partition's Query, in sort-key order. */
export async function queryAllShards(t: TableRef, inputs: readonly QueryCommandInput[]): Promise<Item[]> {
  return (await Promise.all(inputs.map((input) => queryAll(t, input)))).flat().sort(bySortKey);
}
