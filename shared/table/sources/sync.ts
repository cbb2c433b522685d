import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, Definition, DefinitionSettings, SourceKind } from '../../accounts/model.ts';
import { winningDefinition } from '../../accounts/precedence.ts';
import type { AccountSettings } from '../../accounts/settings.ts';
import { runBounded } from '../core/bounded.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { dropAccessEntry, syncAccessEntry } from '../accounts/access.ts';
import { ChangeAppender, appendChanges, type Change } from '../accounts/feed.ts';
import { settleAccountIndexes } from '../accounts/facets.ts';
import { followHeldAccounts } from '../accounts/held.ts';
import { createAccount, deleteAccount, getAccount, mutateAccount, removeDefinition, setDefinition } from '../accounts/records.ts';
import { markCacheCleanup } from '../resources/cleanup.ts';
import { setSourceDigestParams, withSourceLock, type HeldSourceLock, type SourceLockOptions } from './lock.ts';
import { deleteMembers, putMemberHashes, putPendingMembers, readSourceMembers } from './memberships.ts';
import { createSourceAccounts } from './new-accounts.ts';

/**
 * A source of account definitions as stored: the driver config file, a config server, a plugin (with
 * its numeric precedence), or one agent's static accounts. Each source's definitions are synced as a
 * whole: what it no longer defines is removed.
 */
export interface SourceRef {
  /** Stable id: `driver-config`, `config-server`, `plugin:<name>`, `agent:<agentId>`. */
  id: string;
  kind: SourceKind;
  precedence?: number;
  agentId?: string;
  zoneId?: string;
}

/** Writes of one sync in flight at once, where they must go one item at a time. */
export const SYNC_CONCURRENCY = 8;

export interface SyncResult {
  /** Names whose definition from this source was added or changed. */
  upserted: string[];
  removed: string[];
  unchanged: number;
  /** Set when nothing was done because a newer session's announcement holds the source. */
  superseded?: true;
}

function definitionOf(source: SourceRef, settings: DefinitionSettings, now: number): Definition {
  return {
    kind: source.kind,
    ...(source.precedence === undefined ? {} : { precedence: source.precedence }),
    ...(source.agentId === undefined ? {} : { agentId: source.agentId }),
    ...(source.zoneId === undefined ? {} : { zoneId: source.zoneId }),
    settings,
    at: now,
  };
}

/** Content hash of a definition, without its timestamp: an unchanged definition costs no write. */
export function definitionHash(def: Definition): string {
  const { at: _at, ...content } = def;
  return createHash('sha256').update(stableJson(content)).digest('base64url').slice(0, 22);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Agents holding the account must get its new definition: a migrated, active account whose definition
 * changed, an account served from an agent's own file whose entry changed (`staticChanged`), or an
 * account an agent announces whose driver definition changed (`driverChanged`: a plugin may now win
 * over the agent's entry, or no longer), gets a new generation and is queued again. Without the new
 * generation a driver could not tell an agent holding the old settings from one holding the new (it
 * compares generations, not settings).
 */
async function requeueIfActive(t: TableRef, record: AccountRecord, now: number, staticChanged = false, driverChanged = false): Promise<Change | undefined> {
  const announced = (r: AccountRecord) => Object.values(r.defs).some((d) => d.kind === 'static-agent-config');
  const needed = (r: AccountRecord) =>
    (staticChanged && winningDefinition(r.defs)?.[1].kind === 'static-agent-config') ||
    (driverChanged && announced(r)) ||
    (r.registration !== undefined && r.state === 'ACTIVE');
  if (!needed(record)) return undefined;
  const seen = record.generation;
  try {
    // Another writer may change the item between the definition's write and this one (an agent's
    // answer, a caching election): read again and retry. A generation already past the one seen
    // with the new definition was raised, and queued, by someone else, who sends the new definition.
    const { record: after, changed } = await mutateAccount(
      t,
      record.name,
      (r) => (r === undefined || r.generation !== seen || !needed(r) ? undefined : { generation: r.generation + 1 }),
      () => now,
      { initial: record },
    );
    return changed && after !== undefined ? { name: record.name, action: 'assign', generation: after.generation, at: now } : undefined;
  } catch (err) {
    // Changed by others on every try: the reconcile sends it.
    if ((err as { code?: string }).code !== 'precondition_failed') throw err;
    return undefined;
  }
}

/**
 * Puts one definition into an account item that may already hold others, creating the item when it
 * is missing; the item as written, and the feed entry when agents holding it must hear of it.
 * `staticChanged`: an agent's own entry that it announced before (see `requeueIfActive`).
 */
async function setSourceDefinition(
  t: TableRef,
  name: string,
  sourceId: string,
  def: Definition,
  now: number,
  staticChanged: boolean,
): Promise<{ record?: AccountRecord; change?: Change }> {
  let record = await setDefinition(t, name, sourceId, def, now);
  if (record === undefined) {
    await createAccount(t, name, now);
    record = await setDefinition(t, name, sourceId, def, now);
  }
  if (record === undefined) return {};
  await syncAccessEntry(t, record);
  const change = await requeueIfActive(t, record, now, staticChanged, def.kind !== 'static-agent-config');
  return { record, ...(change === undefined ? {} : { change }) };
}

/** Takes one definition out of its account item; true when that left no definition and the item went. */
async function remove(t: TableRef, name: string, source: SourceRef, now: number): Promise<boolean> {
  const sourceId = source.id;
  const after = await removeDefinition(t, name, sourceId, now);
  if (after === undefined) return true;
  if (Object.keys(after.defs).length > 0) {
    await syncAccessEntry(t, after);
    const change = await requeueIfActive(t, after, now, false, source.kind !== 'static-agent-config');
    if (change !== undefined) await appendChanges(t, [change]);
    return false;
  }
  // No source defines the account any more: it goes, and agents holding it are told to drop it. Its
  // access entry goes first, so a crash cannot leave one behind for a later account of that name.
  await dropAccessEntry(t, name);
  // The cache cleanup marker goes before the item: a crash between leaves a marker the cleanup drops
  // unworked while the account still has a writer, never an account gone with its cache kept.
  await markCacheCleanup(t, name, now);
  let last: AccountRecord | undefined = after;
  for (let attempt = 0; attempt < 10 && last !== undefined && Object.keys(last.defs).length === 0; attempt++) {
    if (await deleteAccount(t, name, last.version)) {
      await followHeldAccounts(t, [{ record: last, agentIds: Object.keys(last.agents), gone: true }]);
      if (last.registration !== undefined) {
        await appendChanges(t, [{ name, action: 'remove', generation: last.generation + 1, at: now }]);
      }
      return true;
    }
    // Another writer (an agent result, a new definition) got in first: look again.
    last = await getAccount(t, name, { consistent: true });
  }
  return last === undefined;
}

/**
 * Makes the table hold exactly `accounts` for this source: adds and updates changed definitions,
 * removes the ones the source no longer has. Idempotent, and safe to run again after a crash.
 */
export async function syncSource(
  t: TableRef,
  source: SourceRef,
  accounts: readonly (AccountSettings | ({ name: string } & DefinitionSettings))[],
  now: number,
  options: { concurrency?: number; lock?: SourceLockOptions } = {},
): Promise<SyncResult> {
  const outcome = await withSourceLock(t, source.id, options.lock ?? {}, (held) => syncSourceLocked(t, source, accounts, now, options.concurrency ?? SYNC_CONCURRENCY, held));
  return outcome.ran ? outcome.value : { upserted: [], removed: [], unchanged: 0, superseded: true };
}

/**
 * The order of writes (docs/table.md#definition-sources): memberships without hash, then the
 * definitions (new account items whole, other definitions one item at a time), the access entries,
 * the feed, the name and facet indexes, and the membership hashes last, so a crash anywhere leaves
 * names the next sync redoes. Writes of many items go in batches where no condition is needed.
 */
async function syncSourceLocked(
  t: TableRef,
  source: SourceRef,
  accounts: readonly (AccountSettings | ({ name: string } & DefinitionSettings))[],
  now: number,
  concurrency: number,
  held: HeldSourceLock,
): Promise<SyncResult> {
  const wanted = new Map(accounts.map((a) => [a.name, a]));
  const defs = new Map<string, { def: Definition; hash: string }>();
  for (const [name, account] of wanted) {
    const { name: _name, ...settings } = account;
    const def = definitionOf(source, settings, now);
    defs.set(name, { def, hash: definitionHash(def) });
  }
  // The source as its last finished sync stored it: nothing to read or write.
  const digest = sourceDigest(defs);
  if (held.digest === digest) return { upserted: [], removed: [], unchanged: defs.size };
  // Forgotten before anything changes, so a sync that stops halfway never leaves a digest that matches.
  if (held.digest !== undefined) await t.client.send(new UpdateCommand(setSourceDigestParams(t.tableName, source.id, held.holder, undefined)));
  const current = await readSourceMembers(t, source.id);
  const result: SyncResult = { upserted: [], removed: [], unchanged: 0 };
  const hashes = new Map<string, string>();
  // A name without a stored hash (new to the source, or left by a crash before its hash) is usually
  // new to the table: one conditional put creates its item whole.
  const fresh = new Map<string, Definition>();
  const changed = new Map<string, Definition>();
  for (const [name, { def, hash }] of defs) {
    const stored = current.get(name);
    if (stored === hash) {
      result.unchanged++;
      continue;
    }
    result.upserted.push(name);
    hashes.set(name, hash);
    (stored === undefined ? fresh : changed).set(name, def);
  }
  result.removed.push(...[...current.keys()].filter((name) => !wanted.has(name)));
  if (result.upserted.length === 0 && result.removed.length === 0) {
    await recordDigest(t, source.id, held.holder, digest);
    return result;
  }

  await putPendingMembers(t, source.id, result.upserted, concurrency);
  const { created, existing } = await createSourceAccounts(t, source.id, fresh, now, concurrency);
  // What the writes left, so the indexes start from it rather than from a read.
  const written: AccountRecord[] = [...created];
  const gone: string[] = [];
  // Entries go 25 at a time as they come, so the replicas start on the first while the rest are written.
  const feed = new ChangeAppender(t);
  const isStatic = source.kind === 'static-agent-config';
  await runBounded(
    [
      ...[...existing.map((name) => [name, fresh.get(name) as Definition] as const), ...changed].map(([name, def]) => async () => {
        const { record, change } = await setSourceDefinition(t, name, source.id, def, now, isStatic && current.has(name));
        if (record !== undefined) written.push(record);
        if (change !== undefined) feed.add(change);
      }),
      ...result.removed.map((name) => async () => {
        if (await remove(t, name, source, now)) gone.push(name);
      }),
    ],
    concurrency,
  );
  await feed.close();
  // The name and facet indexes change once per touched chunk for the whole batch, then settle. A name
  // removed here may stay defined by another source, which may change its served zone and source.
  await settleAccountIndexes(t, [...result.upserted, ...result.removed], { withNames: true, known: written, gone });
  await putMemberHashes(t, source.id, hashes, concurrency);
  await deleteMembers(t, source.id, result.removed, concurrency);
  await recordDigest(t, source.id, held.holder, digest);
  return result;
}

/**
 * One hash of a source's every name with its definition's hash: equal digests mean equal definitions,
 * so a replica's start or a refresh with an unchanged source skips even the read of its memberships.
 */
function sourceDigest(defs: ReadonlyMap<string, { hash: string }>): string {
  const digest = createHash('sha256');
  for (const name of [...defs.keys()].sort()) digest.update(`${name}\n${defs.get(name)?.hash}\n`);
  return digest.digest('base64url').slice(0, 32);
}

/** Best effort: without the digest the next sync reads the memberships, as it would anyway. */
async function recordDigest(t: TableRef, sourceId: string, holder: string, digest: string): Promise<void> {
  await tryConditional(() => t.client.send(new UpdateCommand(setSourceDigestParams(t.tableName, sourceId, holder, digest)))).catch(() => false);
}
