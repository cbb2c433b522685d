import { createHash, randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { backoffDelay, type BackoffPolicy } from '../../backoff.ts';
import { systemClock } from '../../clock.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { RANK_DIR_KEY, rankChunkKey } from './keys.ts';
import { existingAccounts } from './records.ts';

/**
 * The rank index: account names in sorted chunks, and a directory listing each chunk's lower bound,
 * name count and last seen chunk version. `total` is the sum of the counts (one small read), and the
 * name just before any page start is found by reading the directory and one chunk, so a deep page
 * costs what a first page costs plus one chunk. Every change is a single-item conditional write; a
 * crash between the chunk write and the directory write leaves a count stale until the next write to
 * that chunk or a rebuild (`rebuildRankIndex`).
 */
export interface RankEntry {
  id: string;
  /** Lowest name the chunk may hold; '' for the first chunk. */
  lo: string;
  n: number;
  /** The chunk version the count was taken from. */
  v: number;
}

export interface RankDir {
  version: number;
  chunks: RankEntry[];
}

export interface RankChunk {
  id: string;
  version: number;
  names: string[];
  /** Set when the chunk is being split; its names are frozen and its children take over. */
  retired?: boolean;
}

export interface RankOptions {
  /** A chunk holding more names than this is split in two. */
  maxChunkNames?: number;
}

export const DEFAULT_MAX_CHUNK_NAMES = 256;
/** Chunk size a rebuild writes, leaving room to grow before splits. */
const REBUILD_CHUNK_NAMES = 192;
const MAX_ATTEMPTS = 50;

// ---- pure builders ----

export function getRankDirParams(tableName: string, consistent: boolean): GetCommandInput {
  return { TableName: tableName, Key: RANK_DIR_KEY, ConsistentRead: consistent };
}

export function getRankChunkParams(tableName: string, id: string, consistent: boolean): GetCommandInput {
  return { TableName: tableName, Key: rankChunkKey(id), ConsistentRead: consistent };
}

export function createRankDirParams(tableName: string, dir: RankDir): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...RANK_DIR_KEY, ...dir },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Replaces the directory if nobody changed it since `expectedVersion`. */
export function replaceRankDirParams(tableName: string, dir: RankDir, expectedVersion: number): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...RANK_DIR_KEY, ...dir },
    ConditionExpression: 'version = :expected',
    ExpressionAttributeValues: { ':expected': expectedVersion },
  };
}

export function createRankChunkParams(tableName: string, chunk: RankChunk): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...rankChunkKey(chunk.id), ...chunk },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

/** Writes the chunk's new names if it is still at `expectedVersion` and not retired. */
export function putRankChunkParams(tableName: string, chunk: RankChunk, expectedVersion: number): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...rankChunkKey(chunk.id), ...chunk },
    ConditionExpression: 'version = :expected AND attribute_not_exists(retired)',
    ExpressionAttributeValues: { ':expected': expectedVersion },
  };
}

export function retireRankChunkParams(tableName: string, id: string, expectedVersion: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: rankChunkKey(id),
    UpdateExpression: 'SET retired = :true, version = version + :one',
    ConditionExpression: 'version = :expected AND attribute_not_exists(retired)',
    ExpressionAttributeValues: { ':true': true, ':one': 1, ':expected': expectedVersion },
  };
}

/** Records a chunk's count in the directory; only moves forward (a newer chunk version wins). */
export function setRankCountParams(tableName: string, index: number, chunk: RankChunk): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: RANK_DIR_KEY,
    UpdateExpression: `SET chunks[${index}].n = :n, chunks[${index}].v = :v, version = version + :one`,
    ConditionExpression: `chunks[${index}].id = :id AND chunks[${index}].v < :v`,
    ExpressionAttributeValues: { ':n': chunk.names.length, ':v': chunk.version, ':id': chunk.id, ':one': 1 },
  };
}

export function deleteRankChunkParams(tableName: string, id: string): DeleteCommandInput {
  return { TableName: tableName, Key: rankChunkKey(id) };
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

export function insertSorted(names: readonly string[], name: string): string[] {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((names[mid] as string) < name) lo = mid + 1;
    else hi = mid;
  }
  return [...names.slice(0, lo), name, ...names.slice(lo)];
}

/** Child ids derive from the parent so that every writer helping to finish a split writes the same items. */
export function childChunkId(parentId: string, part: number): string {
  return createHash('sha256').update(`${parentId}/${part}`).digest('hex').slice(0, 16);
}

// ---- I/O ----

export async function readDir(t: TableRef, consistent: boolean): Promise<RankDir | undefined> {
  const out = await t.client.send(new GetCommand(getRankDirParams(t.tableName, consistent)));
  return out.Item === undefined ? undefined : { version: out.Item.version as number, chunks: out.Item.chunks as RankEntry[] };
}

export async function readChunk(t: TableRef, id: string, consistent: boolean): Promise<RankChunk | undefined> {
  const out = await t.client.send(new GetCommand(getRankChunkParams(t.tableName, id, consistent)));
  if (out.Item === undefined) return undefined;
  const { id: chunkId, version, names, retired } = out.Item as RankChunk;
  return { id: chunkId, version, names, ...(retired ? { retired } : {}) };
}

async function ensureDir(t: TableRef): Promise<RankDir> {
  const existing = await readDir(t, true);
  if (existing !== undefined) return existing;
  const first: RankChunk = { id: randomUUID(), version: 1, names: [] };
  await t.client.send(new PutCommand(createRankChunkParams(t.tableName, first)));
  const dir: RankDir = { version: 1, chunks: [{ id: first.id, lo: '', n: 0, v: 1 }] };
  if (await tryConditional(() => t.client.send(new PutCommand(createRankDirParams(t.tableName, dir))))) return dir;
  // Another writer created the directory first; its chunk is the one in use.
  await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, first.id)));
  return (await readDir(t, true)) as RankDir;
}

/** Brings the directory's count for `chunk` up to date (no-op when it already is, or the chunk was split). */
async function syncCount(t: TableRef, chunk: RankChunk, hint: number): Promise<void> {
  let index = hint;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (await tryConditional(() => t.client.send(new UpdateCommand(setRankCountParams(t.tableName, index, chunk))))) return;
    const dir = await readDir(t, true);
    const found = dir?.chunks.findIndex((c) => c.id === chunk.id) ?? -1;
    if (found < 0 || (dir?.chunks[found] as RankEntry).v >= chunk.version) return;
    index = found;
    await backoff(attempt);
  }
  throw new VendorError('precondition_failed', 'rank index directory is too busy; try again');
}

/** Number of children a retired chunk splits into: halves of the maximum, so each child has room to grow. */
function splitParts(retired: RankChunk, maxNames: number): string[][] {
  const size = Math.max(1, Math.floor(maxNames / 2));
  const count = Math.max(2, Math.ceil(retired.names.length / size));
  const per = Math.ceil(retired.names.length / count);
  return Array.from({ length: count }, (_, i) => retired.names.slice(i * per, (i + 1) * per));
}

/** Finishes splitting a retired chunk: creates its children and swaps them into the directory. */
async function finishSplit(t: TableRef, retired: RankChunk, maxNames: number): Promise<void> {
  const children = splitParts(retired, maxNames).map((names, i) => ({ id: childChunkId(retired.id, i), version: 1, names }));
  for (const child of children) {
    await tryConditional(() => t.client.send(new PutCommand(createRankChunkParams(t.tableName, child))));
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const dir = await readDir(t, true);
    const index = dir?.chunks.findIndex((c) => c.id === retired.id) ?? -1;
    if (dir === undefined || index < 0) break;
    const entry = dir.chunks[index] as RankEntry;
    const replaced: RankDir = {
      version: dir.version + 1,
      chunks: [
        ...dir.chunks.slice(0, index),
        ...children.map((c, i) => ({ id: c.id, lo: i === 0 ? entry.lo : (c.names[0] ?? entry.lo), n: c.names.length, v: 1 })),
        ...dir.chunks.slice(index + 1),
      ],
    };
    if (await tryConditional(() => t.client.send(new PutCommand(replaceRankDirParams(t.tableName, replaced, dir.version))))) break;
    await backoff(attempt);
  }
  await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, retired.id)));
}

/** Up to 2 ms for attempt 0, doubling to at most 50 ms, drawn anywhere from nothing to the whole. */
const LOST_WRITE_BACKOFF: BackoffPolicy = { baseMs: 2, maxMs: 50, maxSteps: 5, jitter: [0, 1] };

/** A short random wait before retrying a lost conditional write, so writers of one chunk spread out. */
function backoff(attempt: number): Promise<void> {
  return systemClock.sleep(backoffDelay(LOST_WRITE_BACKOFF, attempt + 1));
}

/**
 * Adds and removes names, one conditional write per touched chunk: a bulk load of thousands of names
 * costs one write per chunk, not one per name.
 */
async function changeMembership(t: TableRef, add: readonly string[], remove: readonly string[], options: RankOptions): Promise<void> {
  const maxNames = options.maxChunkNames ?? DEFAULT_MAX_CHUNK_NAMES;
  let pendingAdd = new Set(add);
  let pendingRemove = new Set(remove.filter((n) => !pendingAdd.has(n)));
  for (let attempt = 0; attempt < MAX_ATTEMPTS && pendingAdd.size + pendingRemove.size > 0; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const dir = await ensureDir(t);
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
      const done = await applyToChunk(t, dir, index, group, maxNames);
      if (!done) {
        group.add.forEach((n) => nextAdd.add(n));
        group.remove.forEach((n) => nextRemove.add(n));
      }
    }
    pendingAdd = nextAdd;
    pendingRemove = nextRemove;
  }
  if (pendingAdd.size + pendingRemove.size > 0) throw new VendorError('precondition_failed', 'rank index is too busy; try again');
}

/** Applies one chunk's share of a change; false when the chunk moved on and the caller must retry. */
async function applyToChunk(
  t: TableRef,
  dir: RankDir,
  index: number,
  group: { add: string[]; remove: string[] },
  maxNames: number,
): Promise<boolean> {
  const entry = dir.chunks[index] as RankEntry;
  const chunk = await readChunk(t, entry.id, true);
  if (chunk === undefined) return false; // split finished between the two reads
  if (chunk.retired) {
    await finishSplit(t, chunk, maxNames);
    return false;
  }
  const removing = new Set(group.remove);
  let names = chunk.names.filter((n) => !removing.has(n));
  for (const name of group.add) if (!names.includes(name)) names = insertSorted(names, name);
  let current = chunk;
  if (names.length !== chunk.names.length || names.some((n, i) => n !== chunk.names[i])) {
    const next: RankChunk = { id: chunk.id, version: chunk.version + 1, names };
    if (!(await tryConditional(() => t.client.send(new PutCommand(putRankChunkParams(t.tableName, next, chunk.version)))))) return false;
    current = next;
  }
  await syncCount(t, current, index);
  if (current.names.length > maxNames) {
    const retiredOk = await tryConditional(() =>
      t.client.send(new UpdateCommand(retireRankChunkParams(t.tableName, current.id, current.version))),
    );
    if (retiredOk) await finishSplit(t, { ...current, version: current.version + 1, retired: true }, maxNames);
  }
  return true;
}

/** Adds some names and removes others in one pass over the touched chunks (idempotent). */
export function rankChange(t: TableRef, add: readonly string[], remove: readonly string[], options: RankOptions = {}): Promise<void> {
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

/**
 * Rewrites the index from the account items: the repair for counts left stale by a crash and the way
 * to compact small chunks. Reads every account key, so it is an operator's or a periodic job's tool.
 */
export async function rebuildRankIndex(t: TableRef): Promise<{ total: number; chunks: number }> {
  const names = (
    await queryAll(t, {
      TableName: t.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': PK.account },
      ProjectionExpression: 'sk',
    })
  ).map((item) => item.sk as string);

  const chunks: RankChunk[] = [];
  for (let i = 0; i === 0 || i < names.length; i += REBUILD_CHUNK_NAMES) {
    chunks.push({ id: randomUUID(), version: 1, names: names.slice(i, i + REBUILD_CHUNK_NAMES) });
  }
  for (const chunk of chunks) await t.client.send(new PutCommand(createRankChunkParams(t.tableName, chunk)));
  const old = await readDir(t, true);
  const dir: RankDir = {
    version: (old?.version ?? 0) + 1,
    chunks: chunks.map((c, i) => ({ id: c.id, lo: i === 0 ? '' : (c.names[0] as string), n: c.names.length, v: 1 })),
  };
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...RANK_DIR_KEY, ...dir } }));
  for (const entry of old?.chunks ?? []) {
    await t.client.send(new DeleteCommand(deleteRankChunkParams(t.tableName, entry.id)));
  }
  return { total: names.length, chunks: chunks.length };
}

/**
 * Rebuilds the index when its directory is missing while accounts exist (data written before the index
 * existed, or a directory lost by hand). One small read when all is well.
 */
export async function ensureRankIndex(t: TableRef): Promise<boolean> {
  if ((await readDir(t, true)) !== undefined) return false;
  const out = await t.client.send(
    new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.account }, Limit: 1 }),
  );
  if ((out.Items ?? []).length === 0) return false;
  await rebuildRankIndex(t);
  return true;
}

const MAX_RANK_SETTLE_ROUNDS = 20;

/**
 * Makes the rank index hold a name exactly when its account item exists. The item write and the index
 * write are separate, so another writer may delete or create the item in between (an agent's new
 * session announcing a name while the sweep of its old one withdraws it). Each writer therefore sets
 * the index to what it last saw of the items, then reads the items again and repeats for any name
 * that changed meanwhile: whoever writes the index last has seen the items' final state after its write.
 */
export async function settleRankIndex(t: TableRef, expected: ReadonlyMap<string, boolean>): Promise<void> {
  let seen = expected;
  for (let round = 0; round < MAX_RANK_SETTLE_ROUNDS && seen.size > 0; round++) {
    const names = [...seen.keys()];
    await rankChange(
      t,
      names.filter((n) => seen.get(n)),
      names.filter((n) => !seen.get(n)),
    );
    const exist = await existingAccounts(t, names);
    seen = new Map(names.filter((n) => exist.has(n) !== seen.get(n)).map((n) => [n, exist.has(n)]));
  }
  if (seen.size > 0) throw new VendorError('unavailable', 'accounts keep changing while the rank index follows them; try again');
}
