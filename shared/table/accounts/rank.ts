import { createHash, randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { backoffDelay, type BackoffPolicy } from '../../backoff.ts';
import { systemClock } from '../../clock.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import type { Key } from '../core/keys.ts';
import { queryAllShards, queryShards } from '../core/sharded-query.ts';
import { ACCOUNT_PARTITIONS, RANK_DIR_KEY, rankChunkKey } from './keys.ts';

/**
 * The rank index: account names in sorted chunks, and a directory listing each chunk's lower bound,
 * name count and last seen chunk version. `total` is the sum of the counts (one small read), and the
 * name just before any page start is found by reading the directory and one chunk, so a deep page
 * costs what a first page costs plus one chunk. Every change is a single-item conditional write; a
 * crash between the chunk write and the directory write leaves a count stale until the next write to
 * that chunk or a rebuild (`rebuildRankIndex`).
 *
 * The same structure serves more than one index (`RankSpace`): the name index, and the facet index
 * (shared/table/accounts/facets.ts), whose chunks also hold a tag per name and whose directory also
 * counts each chunk's names by tag.
 */
export interface RankEntry {
  id: string;
  /** Lowest name the chunk may hold; '' for the first chunk. */
  lo: string;
  n: number;
  /** The chunk version the count was taken from. */
  v: number;
  /** Tagged spaces only: the chunk's names counted by tag. */
  c?: Record<string, number>;
}

export interface RankDir {
  version: number;
  chunks: RankEntry[];
}

export interface RankChunk {
  id: string;
  version: number;
  names: string[];
  /** Tagged spaces only: the tag of each name, in the same order. */
  tags?: string[];
  /** Set when the chunk is being split; its names are frozen and its children take over. */
  retired?: boolean;
}

/** Where one index keeps its directory and chunks, and whether its names carry tags. */
export interface RankSpace {
  dirKey: Key;
  chunkKey: (id: string) => Key;
  tagged: boolean;
}

/** The index of account names (what `total` and the unfiltered pages read). */
export const NAME_RANK: RankSpace = { dirKey: RANK_DIR_KEY, chunkKey: rankChunkKey, tagged: false };

export interface RankOptions {
  /** A chunk holding more names than this is split in two. */
  maxChunkNames?: number;
  space?: RankSpace;
}

export const DEFAULT_MAX_CHUNK_NAMES = 256;
/** Chunk size a rebuild writes, leaving room to grow before splits. */
const REBUILD_CHUNK_NAMES = 192;
const MAX_ATTEMPTS = 50;

// ---- pure builders ----

export function getRankDirParams(tableName: string, consistent: boolean, space: RankSpace = NAME_RANK): GetCommandInput {
  return { TableName: tableName, Key: space.dirKey, ConsistentRead: consistent };
}

export function getRankChunkParams(tableName: string, id: string, consistent: boolean, space: RankSpace = NAME_RANK): GetCommandInput {
  return { TableName: tableName, Key: space.chunkKey(id), ConsistentRead: consistent };
}

export function createRankDirParams(tableName: string, dir: RankDir, space: RankSpace = NAME_RANK): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...space.dirKey, ...dir },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Replaces the directory if nobody changed it since `expectedVersion`. */
export function replaceRankDirParams(tableName: string, dir: RankDir, expectedVersion: number, space: RankSpace = NAME_RANK): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...space.dirKey, ...dir },
    ConditionExpression: 'version = :expected',
    ExpressionAttributeValues: { ':expected': expectedVersion },
  };
}

export function createRankChunkParams(tableName: string, chunk: RankChunk, space: RankSpace = NAME_RANK): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...space.chunkKey(chunk.id), ...chunk },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Writes the chunk's new names if it is still at `expectedVersion` and not retired. */
export function putRankChunkParams(tableName: string, chunk: RankChunk, expectedVersion: number, space: RankSpace = NAME_RANK): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...space.chunkKey(chunk.id), ...chunk },
    ConditionExpression: 'version = :expected AND attribute_not_exists(retired)',
    ExpressionAttributeValues: { ':expected': expectedVersion },
  };
}

export function retireRankChunkParams(tableName: string, id: string, expectedVersion: number, space: RankSpace = NAME_RANK): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: space.chunkKey(id),
    UpdateExpression: 'SET retired = :true, version = version + :one',
    ConditionExpression: 'version = :expected AND attribute_not_exists(retired)',
    ExpressionAttributeValues: { ':true': true, ':one': 1, ':expected': expectedVersion },
  };
}

/** Records a chunk's count in the directory; only moves forward (a newer chunk version wins). */
export function setRankCountParams(tableName: string, index: number, chunk: RankChunk, space: RankSpace = NAME_RANK): UpdateCommandInput {
  const tagged = chunk.tags !== undefined;
  return {
    TableName: tableName,
    Key: space.dirKey,
    UpdateExpression: `SET chunks[${index}].n = :n, chunks[${index}].v = :v, ${tagged ? `chunks[${index}].c = :c, ` : ''}version = version + :one`,
    ConditionExpression: `chunks[${index}].id = :id AND chunks[${index}].v < :v`,
    ExpressionAttributeValues: { ':n': chunk.names.length, ':v': chunk.version, ':id': chunk.id, ':one': 1, ...(tagged ? { ':c': tagCounts(chunk) } : {}) },
  };
}

export function deleteRankChunkParams(tableName: string, id: string, space: RankSpace = NAME_RANK): DeleteCommandInput {
  return { TableName: tableName, Key: space.chunkKey(id) };
}

// ---- pure helpers ----

/**
 * Index of the chunk whose range holds `name`: the last chunk whose lower bound is not above it. The
 * directory keeps its chunks sorted by lower bound (a split puts its children where the parent was), so
 * a binary search finds it.
 */
export function chunkIndexFor(chunks: readonly RankEntry[], name: string): number {
  let lo = 0;
  let hi = chunks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((chunks[mid] as RankEntry).lo <= name) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A tagged chunk's names counted by tag. */
export function tagCounts(chunk: Pick<RankChunk, 'tags'>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const tag of chunk.tags ?? []) counts[tag] = (counts[tag] ?? 0) + 1;
  return counts;
}

/** The directory entry of a chunk just written whole (a split's child, a rebuild's chunk). */
function entryOf(chunk: RankChunk, lo: string): RankEntry {
  return { id: chunk.id, lo, n: chunk.names.length, v: chunk.version, ...(chunk.tags === undefined ? {} : { c: tagCounts(chunk) }) };
}

export function totalOf(dir: RankDir): number {
  return dir.chunks.reduce((sum, c) => sum + c.n, 0);
}

/** The chunk holding rank `rank` (0-based) and the rank of its first name. */
export function chunkAtRank(dir: RankDir, rank: number): { index: number; first: number } | undefined {
  let first = 0;
  for (let i = 0; i < dir.chunks.length; i++) {
    const n = (dir.chunks[i] as RankEntry).n;
    if (rank < first + n) return { index: i, first };
    first += n;
  }
  return undefined;
}

/** Child ids derive from the parent so that every writer helping to finish a split writes the same items. */
export function childChunkId(parentId: string, part: number): string {
  return createHash('sha256').update(`${parentId}/${part}`).digest('hex').slice(0, 16);
}

// ---- I/O ----

export async function readDir(t: TableRef, consistent: boolean, space: RankSpace = NAME_RANK): Promise<RankDir | undefined> {
  const out = await t.client.send(new GetCommand(getRankDirParams(t.tableName, consistent, space)));
  return out.Item === undefined ? undefined : { version: out.Item.version as number, chunks: out.Item.chunks as RankEntry[] };
}

export async function readChunk(t: TableRef, id: string, consistent: boolean, space: RankSpace = NAME_RANK): Promise<RankChunk | undefined> {
  const out = await t.client.send(new GetCommand(getRankChunkParams(t.tableName, id, consistent, space)));
  if (out.Item === undefined) return undefined;
  const { id: chunkId, version, names, tags, retired } = out.Item as RankChunk;
  return { id: chunkId, version, names, ...(tags === undefined ? {} : { tags }), ...(retired ? { retired } : {}) };
}

async function ensureDir(t: TableRef, space: RankSpace): Promise<RankDir> {
  const existing = await readDir(t, true, space);
  if (existing !== undefined) return existing;
  const first: RankChunk = { id: randomUUID(), version: 1, names: [], ...(space.tagged ? { tags: [] } : {}) };
  await t.client.send(new PutCommand(createRankChunkParams(t.tableName, first, space)));
  const dir: RankDir = { version: 1, chunks: [entryOf(first, '')] };
  if (await tryConditional(() => t.client.send(new PutCommand(createRankDirParams(t.tableName, dir, space))))) return dir;
  // Another writer created the directory first; its chunk is the one in use.
  await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, first.id, space)));
  return (await readDir(t, true, space)) as RankDir;
}

/** Brings the directory's count for `chunk` up to date (no-op when it already is, or the chunk was split). */
async function syncCount(t: TableRef, space: RankSpace, chunk: RankChunk, hint: number): Promise<void> {
  let index = hint;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (await tryConditional(() => t.client.send(new UpdateCommand(setRankCountParams(t.tableName, index, chunk, space))))) return;
    const dir = await readDir(t, true, space);
    const found = dir?.chunks.findIndex((c) => c.id === chunk.id) ?? -1;
    if (found < 0 || (dir?.chunks[found] as RankEntry).v >= chunk.version) return;
    index = found;
    await backoff(attempt);
  }
  throw new VendorError('precondition_failed', 'rank index directory is too busy; try again');
}

/** Number of children a retired chunk splits into: halves of the maximum, so each child has room to grow. */
function splitParts(retired: RankChunk, maxNames: number): { names: string[]; tags?: string[] }[] {
  const size = Math.max(1, Math.floor(maxNames / 2));
  const count = Math.max(2, Math.ceil(retired.names.length / size));
  const per = Math.ceil(retired.names.length / count);
  return Array.from({ length: count }, (_, i) => ({
    names: retired.names.slice(i * per, (i + 1) * per),
    ...(retired.tags === undefined ? {} : { tags: retired.tags.slice(i * per, (i + 1) * per) }),
  }));
}

/** Finishes splitting a retired chunk: creates its children and swaps them into the directory. */
async function finishSplit(t: TableRef, space: RankSpace, retired: RankChunk, maxNames: number): Promise<void> {
  const children: RankChunk[] = splitParts(retired, maxNames).map((part, i) => ({ id: childChunkId(retired.id, i), version: 1, ...part }));
  for (const child of children) {
    await tryConditional(() => t.client.send(new PutCommand(createRankChunkParams(t.tableName, child, space))));
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const dir = await readDir(t, true, space);
    const index = dir?.chunks.findIndex((c) => c.id === retired.id) ?? -1;
    if (dir === undefined || index < 0) break;
    const entry = dir.chunks[index] as RankEntry;
    const replaced: RankDir = {
      version: dir.version + 1,
      chunks: [...dir.chunks.slice(0, index), ...children.map((c, i) => entryOf(c, i === 0 ? entry.lo : (c.names[0] ?? entry.lo))), ...dir.chunks.slice(index + 1)],
    };
    if (await tryConditional(() => t.client.send(new PutCommand(replaceRankDirParams(t.tableName, replaced, dir.version, space))))) break;
    await backoff(attempt);
  }
  await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, retired.id, space)));
}

/** Up to 2 ms for attempt 0, doubling to at most 50 ms, drawn anywhere from nothing to the whole. */
const LOST_WRITE_BACKOFF: BackoffPolicy = { baseMs: 2, maxMs: 50, maxSteps: 5, jitter: [0, 1] };

/** A short random wait before retrying a lost conditional write, so writers of one chunk spread out. */
function backoff(attempt: number): Promise<void> {
  return systemClock.sleep(backoffDelay(LOST_WRITE_BACKOFF, attempt + 1));
}

/**
 * Adds names (with their tags in a tagged space; a name already there takes its new tag) and removes
 * others, one conditional write per touched chunk: a bulk load of thousands of names costs one write
 * per chunk, not one per name.
 */
async function changeMembership(t: TableRef, add: ReadonlyMap<string, string>, remove: readonly string[], options: RankOptions): Promise<void> {
  const maxNames = options.maxChunkNames ?? DEFAULT_MAX_CHUNK_NAMES;
  const space = options.space ?? NAME_RANK;
  let pendingAdd = new Set(add.keys());
  let pendingRemove = new Set(remove.filter((n) => !pendingAdd.has(n)));
  for (let attempt = 0; attempt < MAX_ATTEMPTS && pendingAdd.size + pendingRemove.size > 0; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const dir = await ensureDir(t, space);
    const byChunk = new Map<number, { add: string[]; remove: string[] }>();
    for (const [names, key] of [[pendingAdd, 'add'], [pendingRemove, 'remove']] as const) {
      for (const name of names) {
        const index = chunkIndexFor(dir.chunks, name);
        const group = byChunk.get(index) ?? { add: [], remove: [] };
        group[key].push(name);
        byChunk.set(index, group);
      }
    }
    const nextAdd = new Set<string>();
    const nextRemove = new Set<string>();
    for (const [index, group] of byChunk) {
      const left = await applyToChunk(t, space, dir, index, group, add, maxNames);
      if (left === undefined) {
        group.add.forEach((n) => nextAdd.add(n));
        group.remove.forEach((n) => nextRemove.add(n));
      } else {
        left.forEach((n) => nextAdd.add(n));
      }
    }
    pendingAdd = nextAdd;
    pendingRemove = nextRemove;
  }
  if (pendingAdd.size + pendingRemove.size > 0) throw new VendorError('precondition_failed', 'rank index is too busy; try again');
}

/** The chunk's names (and tags) after a change; the same arrays when nothing changes. */
export function changedContents(
  chunk: Pick<RankChunk, 'names' | 'tags'>,
  group: { add: readonly string[]; remove: readonly string[] },
  tagOf: ReadonlyMap<string, string>,
): { names: string[]; tags?: string[] } | undefined {
  const entries = new Map(chunk.names.map((n, i) => [n, chunk.tags?.[i] ?? '']));
  for (const name of group.remove) entries.delete(name);
  for (const name of group.add) entries.set(name, tagOf.get(name) ?? '');
  const names = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const tags = names.map((n) => entries.get(n) as string);
  const same = names.length === chunk.names.length && names.every((n, i) => n === chunk.names[i] && (chunk.tags === undefined || tags[i] === chunk.tags[i]));
  if (same) return undefined;
  return { names, ...(chunk.tags === undefined ? {} : { tags }) };
}

/**
 * Applies one chunk's share of a change: the adds that fit and every remove. Returns the adds left for
 * the next pass (a chunk takes at most twice the maximum before it splits, so that a bulk load of
 * thousands of names never writes an item near DynamoDB's 400 KB limit), or undefined when the chunk
 * moved on and the caller must retry the whole share.
 */
async function applyToChunk(
  t: TableRef,
  space: RankSpace,
  dir: RankDir,
  index: number,
  group: { add: string[]; remove: string[] },
  tagOf: ReadonlyMap<string, string>,
  maxNames: number,
): Promise<string[] | undefined> {
  const entry = dir.chunks[index] as RankEntry;
  const chunk = await readChunk(t, entry.id, true, space);
  if (chunk === undefined) return undefined; // split finished between the two reads
  if (chunk.retired) {
    await finishSplit(t, space, chunk, maxNames);
    return undefined;
  }
  const room = Math.max(1, 2 * maxNames - chunk.names.length);
  const left = group.add.slice(room);
  let current = chunk;
  const contents = changedContents(chunk, { add: group.add.slice(0, room), remove: group.remove }, tagOf);
  if (contents !== undefined) {
    const next: RankChunk = { id: chunk.id, version: chunk.version + 1, ...contents };
    if (!(await tryConditional(() => t.client.send(new PutCommand(putRankChunkParams(t.tableName, next, chunk.version, space)))))) return undefined;
    current = next;
  }
  await syncCount(t, space, current, index);
  if (current.names.length > maxNames) {
    const retiredOk = await tryConditional(() =>
      t.client.send(new UpdateCommand(retireRankChunkParams(t.tableName, current.id, current.version, space))),
    );
    if (retiredOk) await finishSplit(t, space, { ...current, version: current.version + 1, retired: true }, maxNames);
  }
  return left;
}

/** Adds some names and removes others in one pass over the touched chunks (idempotent). */
export function rankChange(t: TableRef, add: readonly string[], remove: readonly string[], options: RankOptions = {}): Promise<void> {
  return changeMembership(t, new Map(add.map((n) => [n, ''])), remove, options);
}

/** `rankChange` for a tagged space: each added name with its tag. */
export function taggedRankChange(t: TableRef, add: ReadonlyMap<string, string>, remove: readonly string[], options: RankOptions & { space: RankSpace }): Promise<void> {
  return changeMembership(t, add, remove, options);
}

export interface PageStart {
  total: number;
  /** The name just before the page; absent for the first page. */
  startAfter?: string;
  /** True when the page starts at or past the end. */
  pastEnd: boolean;
}

/**
 * Where a page starting at rank `offset` begins: reads the directory, and one chunk when the page is
 * not the first. Eventually consistent reads: a listing may trail a concurrent write by a moment.
 */
export async function locatePage(t: TableRef, offset: number): Promise<PageStart> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = await readDir(t, attempt > 0);
    if (dir === undefined) return { total: 0, pastEnd: true };
    const total = totalOf(dir);
    if (offset >= total) return { total, pastEnd: true };
    if (offset === 0) return { total, pastEnd: false };
    const at = chunkAtRank(dir, offset - 1) as { index: number; first: number };
    const entry = dir.chunks[at.index] as RankEntry;
    const chunk = await readChunk(t, entry.id, attempt > 0);
    if (chunk === undefined) continue; // split finished after the directory read
    if (chunk.names.length === 0) {
      // A count left stale by a crash; start at the chunk's bound until a write or rebuild repairs it.
      return { total, pastEnd: false, ...(entry.lo === '' ? {} : { startAfter: entry.lo }) };
    }
    const startAfter = chunk.names[Math.min(offset - 1 - at.first, chunk.names.length - 1)] as string;
    return { total, startAfter, pastEnd: false };
  }
  throw new VendorError('unavailable', 'rank index is changing too fast to read; try again');
}

/** The total number of accounts, from the directory alone. */
export async function rankTotal(t: TableRef): Promise<number> {
  const dir = await readDir(t, false);
  return dir === undefined ? 0 : totalOf(dir);
}

/** Every account name (keys only), a Query per shard; with `limit`, at most that many of each. */
export function accountNamesParams(tableName: string, limit?: number): QueryCommandInput[] {
  return ACCOUNT_PARTITIONS.map((pk) => ({
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'sk',
    ...(limit === undefined ? {} : { Limit: limit }),
  }));
}

/**
 * Rewrites the index from the account items: the repair for counts left stale by a crash and the way
 * to compact small chunks. Reads every account key, so it is an operator's or a periodic job's tool.
 */
export async function rebuildRankIndex(t: TableRef): Promise<{ total: number; chunks: number }> {
  const names = (await queryAllShards(t, accountNamesParams(t.tableName))).map((item) => item.sk as string);
  return rewriteRankSpace(t, NAME_RANK, names);
}

/**
 * Replaces a space's whole index with `names` (sorted, with their `tags` in a tagged space): new
 * chunks first, then the directory, then the old chunks go, so a reader sees the old or the new.
 */
export async function rewriteRankSpace(t: TableRef, space: RankSpace, names: readonly string[], tags?: readonly string[]): Promise<{ total: number; chunks: number }> {
  const chunks: RankChunk[] = [];
  for (let i = 0; i === 0 || i < names.length; i += REBUILD_CHUNK_NAMES) {
    const part = { names: names.slice(i, i + REBUILD_CHUNK_NAMES), ...(space.tagged ? { tags: (tags ?? []).slice(i, i + REBUILD_CHUNK_NAMES) } : {}) };
    chunks.push({ id: randomUUID(), version: 1, ...part });
  }
  for (const chunk of chunks) await t.client.send(new PutCommand(createRankChunkParams(t.tableName, chunk, space)));
  const old = await readDir(t, true, space);
  const dir: RankDir = { version: (old?.version ?? 0) + 1, chunks: chunks.map((c, i) => entryOf(c, i === 0 ? '' : (c.names[0] as string))) };
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...space.dirKey, ...dir } }));
  for (const entry of old?.chunks ?? []) {
    await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, entry.id, space)));
  }
  return { total: names.length, chunks: chunks.length };
}

/**
 * Rebuilds the index when its directory is missing while accounts exist (data written before the index
 * existed, or a directory lost by hand). One small read when all is well.
 */
export async function ensureRankIndex(t: TableRef): Promise<boolean> {
  if ((await readDir(t, true)) !== undefined) return false;
  const { items } = await queryShards(t, accountNamesParams(t.tableName, 1), 1);
  if (items.length === 0) return false;
  await rebuildRankIndex(t);
  return true;
}
