import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand, type GetCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { backoffDelay, type BackoffPolicy, type Random } from '../../backoff.ts';
import { systemClock } from '../../clock.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional, updateIfCondition } from '../core/conditional.ts';
import { sourceLockKey } from './keys.ts';

/**
 * One lock item per definition source. A sync reads the source's memberships, changes account items
 * and then writes the memberships again; two syncs of one source at once (an agent's new session
 * announcing its static accounts while a replica sweeps its old session) would each undo part of the
 * other and leave a membership without its definition or a definition without its membership. The
 * lock makes them take turns; its lease frees it when a holder dies. The item also remembers the
 * session whose announcement the source holds, so a late sweep of an older session leaves it alone,
 * and the digest of what the source's last finished sync stored, which the holder learns from the
 * take itself (shared/table/sources/sync.ts skips an unchanged source with it).
 */
export interface SourceLockOptions {
  /** Records this session as the one whose announcement the source now holds. */
  owner?: string;
  /** Takes the lock only while the source belongs to this session (or to none): a sweep's condition. */
  ifOwner?: string;
}

/** What the work run under the lock learns: its holder id, and the digest the source's last finished sync left. */
export interface HeldSourceLock {
  holder: string;
  digest?: string;
}

export const SOURCE_LOCK_LEASE_MS = 30_000;
/** Longer than a lease, so a waiter outlives a holder that died. */
const WAIT_LIMIT_MS = 45_000;

export function acquireSourceLockParams(
  tableName: string,
  sourceId: string,
  holder: string,
  now: number,
  options: SourceLockOptions = {},
): UpdateCommandInput {
  const values: Record<string, unknown> = { ':holder': holder, ':until': now + SOURCE_LOCK_LEASE_MS, ':now': now };
  let set = 'SET #holder = :holder, #until = :until';
  // Its own hold counts as free: when the table applied a take but its answer was lost, the SDK's
  // retry of the same request must succeed, not wait out the lease the first try just set.
  let condition = '(attribute_not_exists(#holder) OR #until < :now OR #holder = :holder)';
  if (options.owner !== undefined) {
    set += ', #owner = :owner';
    values[':owner'] = options.owner;
  }
  if (options.ifOwner !== undefined) {
    condition += ' AND (attribute_not_exists(#owner) OR #owner = :ifOwner)';
    values[':ifOwner'] = options.ifOwner;
  }
  const usesOwner = options.owner !== undefined || options.ifOwner !== undefined;
  return {
    TableName: tableName,
    Key: sourceLockKey(sourceId),
    UpdateExpression: set,
    ConditionExpression: condition,
    ExpressionAttributeNames: { '#holder': 'holder', '#until': 'until', ...(usesOwner ? { '#owner': 'owner' } : {}) },
    ExpressionAttributeValues: values,
    // The item as taken tells the holder the digest its source's last finished sync left.
    ReturnValues: 'ALL_NEW',
  };
}

/** A change to the lock item made only while `holder` still holds it. */
function ownHoldParams(tableName: string, sourceId: string, holder: string, update: string, names: Record<string, string>, values: Record<string, unknown> = {}): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: sourceLockKey(sourceId),
    UpdateExpression: update,
    ConditionExpression: '#holder = :holder',
    ExpressionAttributeNames: { '#holder': 'holder', ...names },
    ExpressionAttributeValues: { ':holder': holder, ...values },
  };
}

/** Extends the lease of a lock still held by `holder`. */
export function renewSourceLockParams(tableName: string, sourceId: string, holder: string, now: number): UpdateCommandInput {
  return ownHoldParams(tableName, sourceId, holder, 'SET #until = :until', { '#until': 'until' }, { ':until': now + SOURCE_LOCK_LEASE_MS });
}

export function releaseSourceLockParams(tableName: string, sourceId: string, holder: string): UpdateCommandInput {
  return ownHoldParams(tableName, sourceId, holder, 'REMOVE #holder, #until', { '#until': 'until' });
}

/**
 * Records the digest of what the source's last finished sync stored (or, with undefined, forgets it
 * before a sync changes anything), while `holder` holds the lock.
 */
export function setSourceDigestParams(tableName: string, sourceId: string, holder: string, digest: string | undefined): UpdateCommandInput {
  return digest === undefined
    ? ownHoldParams(tableName, sourceId, holder, 'REMOVE #digest', { '#digest': 'digest' })
    : ownHoldParams(tableName, sourceId, holder, 'SET #digest = :digest', { '#digest': 'digest' }, { ':digest': digest });
}

export function getSourceLockParams(tableName: string, sourceId: string): GetCommandInput {
  return { TableName: tableName, Key: sourceLockKey(sourceId), ConsistentRead: true };
}

export interface SourceLockDeps {
  /** Current time in ms; the lease is judged by it. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): spreads the waits of writers queued on one lock. */
  random?: Random;
  /** The wait between renewals of a held lease, cut short when the work ends; without it the lease is never renewed. */
  renewalSleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const realDeps: SourceLockDeps = { now: Date.now, sleep: (ms) => systemClock.sleep(ms), renewalSleep: (ms, signal) => systemClock.sleep(ms, signal) };

/**
 * A holder renews its lease every third of it while its work runs: a sync of thousands of definitions
 * on a busy table may take longer than one lease, and must not find another writer of its source
 * beside it when the lease runs out.
 */
export const SOURCE_LOCK_RENEW_MS = SOURCE_LOCK_LEASE_MS / 3;

async function keepLease(t: TableRef, sourceId: string, holder: string, deps: SourceLockDeps, signal: AbortSignal): Promise<void> {
  const wait = deps.renewalSleep;
  if (wait === undefined) return;
  for (;;) {
    try {
      await wait(SOURCE_LOCK_RENEW_MS, signal);
    } catch {
      return;
    }
    if (signal.aborted) return;
    // A renewal the table refuses means the lease ran out and another writer took the lock: nothing
    // left to keep. One the table does not answer is tried again at the next turn, within the lease.
    const kept = await tryConditional(() => t.client.send(new UpdateCommand(renewSourceLockParams(t.tableName, sourceId, holder, deps.now())))).catch(() => true);
    if (!kept) return;
  }
}

/** 10 ms after the first refusal, doubling to at most 500 ms, each between half and the whole. */
const LOCK_BACKOFF: BackoffPolicy = { baseMs: 10, maxMs: 500, maxSteps: 6, jitter: [0.5, 1] };

/**
 * Runs `work` holding the source's lock. Answers `superseded` without running it when `ifOwner` is
 * given and another session's announcement holds the source.
 */
export async function withSourceLock<T>(
  t: TableRef,
  sourceId: string,
  options: SourceLockOptions,
  work: (held: HeldSourceLock) => Promise<T>,
  deps: SourceLockDeps = realDeps,
): Promise<{ ran: true; value: T } | { ran: false; reason: 'superseded' }> {
  const holder = randomUUID();
  let start = deps.now();
  let seenUntil: unknown;
  let taken: Record<string, unknown> | undefined;
  for (let attempt = 0; ; attempt++) {
    const now = deps.now();
    taken = await updateIfCondition(t, acquireSourceLockParams(t.tableName, sourceId, holder, now, options));
    if (taken !== undefined) break;
    const current = (await t.client.send(new GetCommand(getSourceLockParams(t.tableName, sourceId)))).Item;
    if (options.ifOwner !== undefined && current?.owner !== undefined && current.owner !== options.ifOwner) return { ran: false, reason: 'superseded' };
    // A holder that renews its lease is alive and working: wait for it as long as it does.
    if (attempt > 0 && current?.until !== seenUntil) start = now;
    seenUntil = current?.until;
    if (now - start > WAIT_LIMIT_MS) throw new VendorError('unavailable', `definition source ${sourceId} stays locked by another writer; try again`);
    await deps.sleep(backoffDelay(LOCK_BACKOFF, attempt + 1, deps.random));
  }
  const working = new AbortController();
  const renewing = keepLease(t, sourceId, holder, deps, working.signal);
  try {
    const digest = taken.digest;
    return { ran: true, value: await work({ holder, ...(typeof digest === 'string' ? { digest } : {}) }) };
  } finally {
    working.abort();
    await renewing;
    // A release that finds another holder means the lease ran out meanwhile: nothing of ours to free.
    // A release the table refuses leaves the lock to its lease, and must not hide the sync's own error.
    await tryConditional(() => t.client.send(new UpdateCommand(releaseSourceLockParams(t.tableName, sourceId, holder)))).catch(() => false);
  }
}
