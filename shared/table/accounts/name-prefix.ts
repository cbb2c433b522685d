/**
 * Pages of the accounts whose names start with a prefix, from the rank index: the names with a
 * prefix are one contiguous run of ranks, from the count of names below the prefix to the count of
 * names below the prefix's end. Each count is the directory's counts before one chunk plus the names
 * below the bound in that chunk, so the run costs the directory and two chunks, and a page of it
 * what a page of the whole list costs.
 */
import type { AccountRecord } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { chunkIndexFor, locatePage, readChunk, readDir, type RankDir, type RankEntry } from './rank.ts';
import { readAccountRun } from './records.ts';

/** Above every character of an account name: `prefix + PREFIX_END` is past every name with the prefix. */
const PREFIX_END = '\uffff';

/** How many names of the index sort below `bound`: the directory's counts before its chunk, and one chunk read. */
async function countBelow(t: TableRef, dir: RankDir, bound: string): Promise<number | undefined> {
  const index = chunkIndexFor(dir.chunks, bound);
  const entry = dir.chunks[index] as RankEntry;
  const chunk = await readChunk(t, entry.id, false);
  if (chunk === undefined) return undefined; // split since the directory was read
  const before = dir.chunks.slice(0, index).reduce((sum, c) => sum + c.n, 0);
  return before + chunk.names.filter((n) => n < bound).length;
}

/** The ranks [first, end) of the names starting with `prefix`. */
export async function prefixRanks(t: TableRef, prefix: string): Promise<{ first: number; end: number }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await readDir(t, attempt > 0);
    if (dir === undefined) return { first: 0, end: 0 };
    const [first, end] = await Promise.all([countBelow(t, dir, prefix), countBelow(t, dir, prefix + PREFIX_END)]);
    if (first !== undefined && end !== undefined) return { first, end: Math.max(first, end) };
  }
  throw new VendorError('unavailable', 'rank index is changing too fast to read; try again');
}

/** One page of the accounts whose names start with `prefix`, in name order, and how many there are. */
export async function listPrefixAccountPage(t: TableRef, prefix: string, page: number, limit: number): Promise<{ records: AccountRecord[]; total: number }> {
  const { first, end } = await prefixRanks(t, prefix);
  const total = end - first;
  const offset = first + (page - 1) * limit;
  if (offset >= end) return { records: [], total };
  const start = await locatePage(t, offset);
  if (start.pastEnd) return { records: [], total };
  // The index may trail a write by a moment: the page holds only names with the prefix.
  const records = await readAccountRun(t, Math.min(limit, end - offset), start.startAfter, {
    keep: (r) => r.name.startsWith(prefix),
    past: (r) => r.name > prefix + PREFIX_END,
  });
  return { records, total };
}
