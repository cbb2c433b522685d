/**
 * Pages of the account list filtered by state, zone, source and name prefix, in any combination, from
 * the facet index (shared/table/accounts/facets.ts). The directory counts each chunk's names by tag,
 * so the number of matches in every chunk is known from the directory alone; only the chunks cut by
 * the name prefix's two bounds are read to count. The chunks holding the page's matches are then read
 * to name them, and the page's items are read by key or by name range (`readNamedAccounts`).
 *
 * Cost per page: the directory (about 150 bytes per chunk of up to 256 names), the chunks holding the
 * page (at least one; `limit` / (matches per chunk) when matches are sparse, never more than the
 * index has), the up to two prefix-bound chunks, and the page's items. It does not depend on the
 * page number: page 50 costs what page 1 costs. `total` is in the same reads.
 */
import type { AccountRecord } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { FACET_RANK, facetMatches, parseFacetTag, type FacetFilter } from './facets.ts';
import { chunksForPage, readNamedAccounts, walkPage } from './listing.ts';
import { chunkIndexFor, readChunk, readDir, type RankChunk, type RankDir, type RankEntry } from './rank.ts';

/** Above every character of an account name: `prefix + NAME_END` is past every name with the prefix. */
const NAME_END = '\uffff';

/** A name the caller may not see, with the tag its account has, to be left out of counts and pages. */
export type Excluded = ReadonlyMap<string, string>;

interface Judge {
  tag: (tag: string) => boolean;
  name: (name: string) => boolean;
}

function judgeOf(filter: FacetFilter, excluded: Excluded): Judge {
  const memo = new Map<string, boolean>();
  const tag = (t: string) => {
    let ok = memo.get(t);
    if (ok === undefined) memo.set(t, (ok = facetMatches(filter, parseFacetTag(t))));
    return ok;
  };
  const prefix = filter.namePrefix;
  return { tag, name: (n) => (prefix === undefined || n.startsWith(prefix)) && !excluded.has(n) };
}

/** Matches a chunk holds by the directory's counts, less the excluded names in its range that match. */
function countedMatches(dir: RankDir, index: number, judge: Judge, excludedIn: ReadonlyMap<number, string[]>): number {
  const entry = dir.chunks[index] as RankEntry;
  let n = 0;
  for (const [tag, count] of Object.entries(entry.c ?? {})) if (judge.tag(tag)) n += count;
  for (const tag of excludedIn.get(index) ?? []) if (judge.tag(tag)) n--;
  return Math.max(0, n);
}

/** The matching names of a read chunk, in order. */
function matchesIn(chunk: RankChunk, judge: Judge): string[] {
  return chunk.names.filter((name, i) => judge.name(name) && judge.tag(chunk.tags?.[i] ?? ''));
}

export interface FacetPage {
  total: number;
  names: string[];
  /** Names in the index from the page's first to its last name, others included. */
  span: number;
}

/** The matching names at ranks [offset, offset + limit) and how many match in all. */
export async function locateFacetPage(t: TableRef, filter: FacetFilter, offset: number, limit: number, excluded: Excluded = new Map()): Promise<FacetPage> {
  const judge = judgeOf(filter, excluded);
  for (let attempt = 0; attempt < 3; attempt++) {
    const consistent = attempt > 0;
    const dir = await readDir(t, consistent, FACET_RANK);
    if (dir === undefined) return { total: 0, names: [], span: 0 };
    const first = filter.namePrefix === undefined ? 0 : chunkIndexFor(dir.chunks, filter.namePrefix);
    const last = filter.namePrefix === undefined ? dir.chunks.length - 1 : chunkIndexFor(dir.chunks, filter.namePrefix + NAME_END);
    const chunks = new Map<number, RankChunk | undefined>();
    const read = async (indexes: number[]) => {
      const got = await Promise.all(indexes.map((i) => readChunk(t, (dir.chunks[i] as RankEntry).id, consistent, FACET_RANK)));
      indexes.forEach((i, k) => chunks.set(i, got[k]));
    };
    // A prefix cuts its first and last chunks: those are read to count; the others count from the directory.
    if (filter.namePrefix !== undefined) await read([...new Set([first, last])]);
    const excludedIn = new Map<number, string[]>();
    for (const [name, tag] of excluded) {
      const i = chunkIndexFor(dir.chunks, name);
      excludedIn.set(i, [...(excludedIn.get(i) ?? []), tag]);
    }
    const counts: number[] = [];
    for (let i = first; i <= last; i++) {
      const chunk = chunks.get(i);
      counts.push(chunks.has(i) ? (chunk === undefined ? 0 : matchesIn(chunk, judge).length) : countedMatches(dir, i, judge, excludedIn));
    }
    if ([...chunks.values()].some((c) => c === undefined)) continue; // a split finished after the directory read
    const total = counts.reduce((a, b) => a + b, 0);
    if (offset >= total) return { total, names: [], span: 0 };
    const { indexes, skip } = chunksForPage(counts, offset, limit);
    const page = indexes.map((i) => i + first);
    await read(page.filter((i) => !chunks.has(i)));
    if (page.some((i) => chunks.get(i) === undefined)) continue;
    // Chunks between the page's with no match are not read, but their names lie inside its range.
    const run = Array.from({ length: (page.at(-1) as number) - (page[0] as number) + 1 }, (_, k) => {
      const i = (page[0] as number) + k;
      return { chunk: page.includes(i) ? chunks.get(i) : undefined, n: (dir.chunks[i] as RankEntry).n };
    });
    return { total, ...walkPage(run, skip, limit, (chunk, i) => judge.name(chunk.names[i] as string) && judge.tag(chunk.tags?.[i] ?? '')) };
  }
  throw new VendorError('unavailable', 'facet index is changing too fast to read; try again');
}

/**
 * One page of the accounts matching `filter`, leaving out `excluded`, and how many match. The index
 * may trail a write by a moment: the caller judges each record it serves again.
 */
export async function listFacetPage(
  t: TableRef,
  filter: FacetFilter,
  page: number,
  limit: number,
  excluded: Excluded = new Map(),
): Promise<{ records: AccountRecord[]; total: number }> {
  const { total, names, span } = await locateFacetPage(t, filter, (page - 1) * limit, limit, excluded);
  return { records: await readNamedAccounts(t, names, span), total };
}
