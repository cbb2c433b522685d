/**
 * The facet index: every account name, in name order, tagged with what the list filters and the
 * summary judge (docs/api.md#filters): the state, the zone and the source of the account as served.
 * It is a tagged rank space (shared/table/accounts/rank.ts): chunks of sorted names with a tag each,
 * and a directory counting each chunk's names by tag. So the count of any combination of filters is
 * the directory alone, and a page of a filtered list is the directory and the chunks holding the page
 * (shared/table/accounts/facet-listing.ts). docs/table.md#the-facet-index says who keeps it and how.
 */
import type { AccountRecord } from '../../accounts/model.ts';
import type { AccountState, SERVED_SOURCES } from '../../accounts/schema.ts';
import { toAccount } from '../../accounts/view.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { FACET_DIR_KEY, facetChunkKey } from './keys.ts';
import { rankChange, readDir, rewriteRankSpace, taggedRankChange, type RankSpace } from './rank.ts';
import { allAccounts, getAccounts } from './records.ts';

export const FACET_RANK: RankSpace = { dirKey: FACET_DIR_KEY, chunkKey: facetChunkKey, tagged: true };

export type ServedSource = (typeof SERVED_SOURCES)[number];

/** What the filters judge of an account. */
export interface AccountFacet {
  state?: AccountState;
  zoneId?: string;
  source: ServedSource;
}

/** The facet of the account as served: taken from `toAccount`, so the index judges exactly what is served. */
export function facetOf(record: AccountRecord): AccountFacet {
  const { state, zoneId, source } = toAccount(record);
  return { ...(state === undefined ? {} : { state }), ...(zoneId === undefined ? {} : { zoneId }), source };
}

/** A facet as the tag stored beside the name; JSON, so no zone id can be mistaken for a separator. */
export function facetTag(facet: AccountFacet): string {
  return JSON.stringify([facet.state ?? null, facet.source, facet.zoneId ?? null]);
}

export function parseFacetTag(tag: string): AccountFacet {
  const [state, source, zoneId] = JSON.parse(tag) as [AccountState | null, ServedSource, string | null];
  return { ...(state === null ? {} : { state }), ...(zoneId === null ? {} : { zoneId }), source };
}

/** The filters the index answers; each given one must hold, `namePrefix` included. */
export interface FacetFilter {
  states?: ReadonlySet<AccountState>;
  zoneId?: string;
  sources?: ReadonlySet<ServedSource>;
  namePrefix?: string;
}

export function facetMatches(filter: FacetFilter, facet: AccountFacet): boolean {
  if (filter.states !== undefined && (facet.state === undefined || !filter.states.has(facet.state))) return false;
  if (filter.zoneId !== undefined && facet.zoneId !== filter.zoneId) return false;
  return filter.sources === undefined || filter.sources.has(facet.source);
}

/** How many accounts carry each tag, from the directory alone (one small read). */
export async function facetCounts(t: TableRef): Promise<Map<string, number>> {
  const dir = await readDir(t, false, FACET_RANK);
  const counts = new Map<string, number>();
  for (const entry of dir?.chunks ?? []) {
    for (const [tag, n] of Object.entries(entry.c ?? {})) counts.set(tag, (counts.get(tag) ?? 0) + n);
  }
  return counts;
}

/** What the indexes hold for each name: its facet tag, or undefined when the account does not exist. */
type Seen = Map<string, string | undefined>;

async function readSeen(t: TableRef, names: readonly string[]): Promise<Seen> {
  const found = await getAccounts(t, names, { consistent: true });
  return new Map(names.map((n) => [n, seenOf(found.get(n))]));
}

function seenOf(record: AccountRecord | undefined): string | undefined {
  return record === undefined ? undefined : facetTag(facetOf(record));
}

async function applySeen(t: TableRef, seen: Seen, withNames: boolean): Promise<void> {
  const present = new Map<string, string>();
  const absent: string[] = [];
  for (const [name, tag] of seen) {
    if (tag === undefined) absent.push(name);
    else present.set(name, tag);
  }
  await Promise.all([
    withNames ? rankChange(t, [...present.keys()], absent) : undefined,
    taggedRankChange(t, present, absent, { space: FACET_RANK }),
  ]);
}

const MAX_SETTLE_ROUNDS = 20;

/**
 * Makes the indexes follow the account items of `names`: the facet index always, the name index too
 * with `withNames` (the source sync, which creates and deletes items). The item write and the index
 * writes are separate, so another writer may change an item in between. Each writer therefore sets
 * the indexes to what it last saw of the items, then reads the items again (consistently) and repeats
 * for any name that changed meanwhile: whoever writes an index last has seen the items' final state
 * after its write. `known` are records the caller just wrote and `gone` names whose items it just
 * deleted, saving the first read of those.
 *
 * Cost: one consistent read per name per round (two rounds when nobody else writes), and one
 * conditional write per touched chunk of each index plus its directory count.
 */
export async function settleAccountIndexes(
  t: TableRef,
  names: readonly string[],
  options: { withNames?: boolean; known?: readonly AccountRecord[]; gone?: readonly string[] } = {},
): Promise<void> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return;
  const known = new Map<string, AccountRecord | undefined>([...(options.gone ?? []).map((n) => [n, undefined] as const), ...(options.known ?? []).map((r) => [r.name, r] as const)]);
  const unread = unique.filter((n) => !known.has(n));
  let seen: Seen = new Map([...unique.filter((n) => known.has(n)).map((n) => [n, seenOf(known.get(n))] as const), ...(await readSeen(t, unread))]);
  for (let round = 0; round < MAX_SETTLE_ROUNDS && seen.size > 0; round++) {
    await applySeen(t, seen, options.withNames ?? false);
    const now = await readSeen(t, [...seen.keys()]);
    const applied = seen;
    seen = new Map([...now].filter(([name, tag]) => tag !== applied.get(name)));
  }
  if (seen.size > 0) throw new VendorError('unavailable', 'accounts keep changing while their indexes follow them; try again');
}

/** The facet index follows the records a writer just wrote (their state or registration changed). */
export function followAccountFacets(t: TableRef, records: readonly AccountRecord[]): Promise<void> {
  return settleAccountIndexes(
    t,
    records.map((r) => r.name),
    { known: records },
  );
}

/**
 * Rewrites the facet index from the account items: the repair after a crash between an account write
 * and its index write, and the build for data written before the index existed. Reads every account,
 * so it is an operator's or a start-up job.
 */
export async function rebuildFacetIndex(t: TableRef): Promise<{ total: number; chunks: number }> {
  const names: string[] = [];
  const tags: string[] = [];
  for await (const page of allAccounts(t)) {
    for (const record of page) {
      names.push(record.name);
      tags.push(facetTag(facetOf(record)));
    }
  }
  return rewriteRankSpace(t, FACET_RANK, names, tags);
}

/** Builds the facet index when its directory is missing while accounts exist. One small read when all is well. */
export async function ensureFacetIndex(t: TableRef): Promise<boolean> {
  if ((await readDir(t, true, FACET_RANK)) !== undefined) return false;
  const { total } = await rebuildFacetIndex(t);
  return total > 0;
}
