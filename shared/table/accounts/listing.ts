import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { queryAllShards } from '../core/sharded-query.ts';
import { ACCOUNT_PARTITIONS, accountKey } from './keys.ts';
import { chunkIndexFor, locatePage, readChunk, readDir, type RankChunk, type RankDir, type RankEntry } from './rank.ts';
import { accountFromItem, getAccounts, readAccountRun } from './records.ts';

/**
 * Pages of the account list (GET /vendor/accounts), from the rank index. A caller who may read every
 * account gets `listAccountPage`: the index gives the name before the page, one Query the page.
 *
 * A caller who may not gets pages without some names, still from the rank index: each chunk's count
 * in the directory minus the hidden names in its range is the number of names it shows, so the chunks
 * holding a page are found from the directory alone and only they are read. Then the page's items are
 * read by name range or by key, whichever reads less.
 */

/**
 * One page of accounts in name order with the total: the rank index gives the name before the page
 * and the total, then one Query per shard reads the page's items after it (each its share of the
 * page, `queryAccountsParams`), merged by name.
 */
export async function listAccountPage(t: TableRef, page: number, limit: number): Promise<{ records: AccountRecord[]; total: number }> {
  const start = await locatePage(t, (page - 1) * limit);
  if (start.pastEnd) return { records: [], total: start.total };
  return { records: await readAccountRun(t, limit, start.startAfter), total: start.total };
}

/**
 * Read the page as one key range when it spans at most this many names per name shown, else by key.
 * A range read costs the size of every item in it (4 KB per read unit), a read by key 4 KB per item
 * whatever its size: for items of about 0.5 KB the two cost the same at 8 names per name shown.
 */
export const RANGE_READ_FACTOR = 8;

/** Names each chunk shows once `hidden` is left out. */
export function visibleCounts(dir: RankDir, hidden: Iterable<string>): number[] {
  const counts = dir.chunks.map((c) => c.n);
  if (counts.length === 0) return counts;
  for (const name of hidden) {
    const i = chunkIndexFor(dir.chunks, name);
    counts[i] = Math.max(0, (counts[i] as number) - 1);
  }
  return counts;
}

/** The chunks to read for the shown names at ranks [offset, offset + limit): those that show any. */
export function chunksForPage(counts: readonly number[], offset: number, limit: number): { indexes: number[]; skip: number } {
  const indexes: number[] = [];
  let before = 0;
  let skip = 0;
  for (let i = 0; i < counts.length && before < offset + limit; i++) {
    const n = counts[i] as number;
    if (n > 0 && before + n > offset) {
      if (indexes.length === 0) skip = offset - before;
      indexes.push(i);
    }
    before += n;
  }
  return { indexes, skip };
}

export interface VisiblePage {
  /** Names shown in the whole list. */
  total: number;
  /** The page's names, in order. */
  names: string[];
  /** Names in the index from the page's first to its last name, hidden ones included. */
  span: number;
}

/** Walks the read chunks, leaving out hidden names, to the page's names. */
export function pageNames(dir: RankDir, chunks: Map<number, RankChunk>, indexes: readonly number[], skip: number, limit: number, hidden: ReadonlySet<string>): { names: string[]; span: number } {
  const first = indexes[0] ?? 0;
  const last = indexes.at(-1) ?? -1;
  const run = Array.from({ length: Math.max(0, last - first + 1) }, (_, k) => ({ chunk: chunks.get(first + k), n: (dir.chunks[first + k] as RankEntry).n }));
  return walkPage(run, skip, limit, (chunk, i) => !hidden.has(chunk.names[i] as string));
}

/**
 * Walks a run of chunks to a page's names: the names `shows` keeps, after passing over the first
 * `skip` of them. A chunk not read shows nothing, but its `n` names lie inside the page's range and
 * count in `span`.
 */
export function walkPage(
  run: readonly { chunk: RankChunk | undefined; n: number }[],
  skip: number,
  limit: number,
  shows: (chunk: RankChunk, i: number) => boolean,
): { names: string[]; span: number } {
  const names: string[] = [];
  let toSkip = skip;
  let sinceFirst = 0;
  let span = 0;
  for (const { chunk, n } of run) {
    if (names.length === limit) break;
    if (chunk === undefined) {
      if (names.length > 0) sinceFirst += n;
      continue;
    }
    for (const [i, name] of chunk.names.entries()) {
      if (names.length === limit) break;
      if (names.length > 0) sinceFirst++;
      if (!shows(chunk, i)) continue;
      if (toSkip > 0) {
        toSkip--;
        continue;
      }
      names.push(name);
      span = sinceFirst + 1;
    }
  }
  return { names, span };
}

/** Where the page of shown names at `offset` lies: the directory, then the chunks holding it, in parallel. */
export async function locateVisiblePage(t: TableRef, offset: number, limit: number, hidden: ReadonlySet<string>): Promise<VisiblePage> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await readDir(t, attempt > 0);
    if (dir === undefined) return { total: 0, names: [], span: 0 };
    const counts = visibleCounts(dir, hidden);
    const total = counts.reduce((a, b) => a + b, 0);
    if (offset >= total) return { total, names: [], span: 0 };
    const { indexes, skip } = chunksForPage(counts, offset, limit);
    const read = await Promise.all(indexes.map((i) => readChunk(t, (dir.chunks[i] as RankEntry).id, attempt > 0)));
    if (read.some((c) => c === undefined)) continue; // a split finished after the directory read
    const chunks = new Map(indexes.map((i, k) => [i, read[k] as RankChunk]));
    return { total, ...pageNames(dir, chunks, indexes, skip, limit, hidden) };
  }
  throw new VendorError('unavailable', 'rank index is changing too fast to read; try again');
}

/** The accounts named `first` to `last`: one Query of that name range per shard in `shards` (all by default). */
export function queryAccountRangeParams(tableName: string, first: string, last: string, shards: readonly string[] = ACCOUNT_PARTITIONS): QueryCommandInput[] {
  return shards.map((pk) => ({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
    ExpressionAttributeValues: { ':pk': pk, ':first': first, ':last': last },
  }));
}

/**
 * One page of accounts in name order without the `hidden` names, and how many the whole list shows.
 * Accounts deleted since the index was read are left out of the page.
 */
export async function listVisibleAccountPage(
  t: TableRef,
  page: number,
  limit: number,
  hidden: ReadonlySet<string>,
): Promise<{ records: AccountRecord[]; total: number }> {
  const { total, names, span } = await locateVisiblePage(t, (page - 1) * limit, limit, hidden);
  return { records: await readNamedAccounts(t, names, span), total };
}

/**
 * The accounts of `names` (sorted), in that order, read as one name range when the range holds few
 * other names (`span` counts every name from the first to the last), else by key. Accounts deleted
 * since the names were read are left out.
 */
export async function readNamedAccounts(t: TableRef, names: readonly string[], span: number): Promise<AccountRecord[]> {
  if (names.length === 0) return [];
  const wanted = new Set(names);
  let found: Map<string, AccountRecord>;
  if (span <= RANGE_READ_FACTOR * names.length) {
    // Few other names in between: one range read costs less than a read per key (each rounds up to 4 KB).
    // Only the shards that hold a wanted name are read.
    const shards = [...new Set(names.map((name) => accountKey(name).pk))];
    const items = await queryAllShards(t, queryAccountRangeParams(t.tableName, names[0] as string, names.at(-1) as string, shards));
    found = new Map(items.filter((item) => wanted.has(item.sk as string)).map((item) => [item.sk as string, accountFromItem(item)]));
  } else {
    found = await getAccounts(t, names);
  }
  return names.flatMap((name) => found.get(name) ?? []);
}
