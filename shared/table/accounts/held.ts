/**
 * The held index: for each agent, the accounts it holds (`HELD#<agentId>` / account name, with
 * `caching`), so that the agents API reads one agent's accounts with one Query instead of every
 * account item. An agent holds an account when its result in the account item is `ok` and not being
 * removed (the same rule the account served applies to its `agents`).
 *
 * The driver writes the per-agent results into the account item, then makes this index follow
 * (`followHeldAccounts`); the source sync does the same when it deletes an account. The index write
 * is separate from the item write, so each writer sets the entries to what it saw, reads the item
 * again (consistently) and repeats while it changed: whoever writes an entry last has seen the item's
 * final state. A crash in between leaves entries stale until the next write that changes who holds the
 * account (writes that change no one's holding, such as a hand-out, leave the entries alone) or
 * `rebuildHeldAccounts`.
 */
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll } from '../core/batch.ts';
import type { AccountRecord } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { PK_PREFIX } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { heldKey } from './keys.ts';
import { allAccounts, getAccounts } from './records.ts';

export interface HeldEntry {
  name: string;
  caching: boolean;
}

/** Which of `agentIds` hold the account, and whether each caches it; absent ones do not hold it. */
export function holdersOf(record: AccountRecord | undefined, agentIds: Iterable<string>): Map<string, boolean | undefined> {
  const out = new Map<string, boolean | undefined>();
  for (const agentId of agentIds) {
    const result = record?.agents[agentId];
    out.set(agentId, result !== undefined && result.ok && result.removing !== true ? result.caching : undefined);
  }
  return out;
}

/**
 * Which of `agentIds` hold the account differently after a write than before it (hold it or not, or
 * cache it or not): only their entries can have been made wrong by that write, so only they need to
 * follow. A hand-out (an entry not yet confirmed) changes no one's.
 */
export function agentsWhoseHoldingChanged(before: AccountRecord | undefined, after: AccountRecord | undefined, agentIds: Iterable<string>): string[] {
  const was = holdersOf(before, agentIds);
  const now = holdersOf(after, was.keys());
  return [...was].filter(([agentId, caching]) => now.get(agentId) !== caching).map(([agentId]) => agentId);
}

export function queryHeldParams(tableName: string, agentId: string): QueryCommandInput {
  return { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `${PK_PREFIX.held}${agentId}` } };
}

/** The accounts one agent holds, in name order: one Query per MB of entries (about 40 bytes each). */
export async function readHeldAccounts(t: TableRef, agentId: string): Promise<HeldEntry[]> {
  const items = await queryAll(t, queryHeldParams(t.tableName, agentId));
  return items.map((item) => ({ name: item.sk as string, caching: item.caching === true }));
}

/** Entries of one round, 25 to a BatchWriteItem: plain puts and deletes, since each sets what its writer saw. */
function writeEntries(t: TableRef, entries: readonly (readonly [string, string, boolean | undefined])[]): Promise<void> {
  return batchWriteAll(
    t,
    entries.map(([agentId, name, caching]) =>
      caching === undefined ? { DeleteRequest: { Key: heldKey(agentId, name) } } : { PutRequest: { Item: { ...heldKey(agentId, name), caching } } },
    ),
    4,
  );
}

/** One change per account: the agents of every change of it, and its newest record. */
function mergedChanges(changes: readonly { record: AccountRecord; agentIds: Iterable<string>; gone?: boolean }[]): Map<string, { record: AccountRecord; agentIds: Set<string>; gone: boolean }> {
  const merged = new Map<string, { record: AccountRecord; agentIds: Set<string>; gone: boolean }>();
  for (const c of changes) {
    const known = merged.get(c.record.name);
    if (known === undefined) {
      merged.set(c.record.name, { record: c.record, agentIds: new Set(c.agentIds), gone: c.gone ?? false });
      continue;
    }
    for (const a of c.agentIds) known.agentIds.add(a);
    if (c.record.version > known.record.version) Object.assign(known, { record: c.record, gone: c.gone ?? false });
  }
  return merged;
}

const MAX_ROUNDS = 20;

/**
 * Makes the entries of `agentIds` for each account follow its item. `records` are the items the
 * caller just wrote (or, for an account it deleted, its last item with `gone`), `agentIds` the
 * agents whose results it changed or removed; an account may come more than once (its agents are
 * joined, its newest record counts). Cost per round: one BatchWriteItem per 25 entries and one
 * consistent BatchGetItem per 100 accounts (two rounds when nobody else writes).
 */
export async function followHeldAccounts(t: TableRef, changes: readonly { record: AccountRecord; agentIds: Iterable<string>; gone?: boolean }[]): Promise<void> {
  let seen = new Map(
    [...mergedChanges(changes).values()].filter((c) => c.agentIds.size > 0).map((c) => [c.record.name, holdersOf(c.gone ? undefined : c.record, c.agentIds)]),
  );
  for (let round = 0; round < MAX_ROUNDS && seen.size > 0; round++) {
    await writeEntries(t, [...seen].flatMap(([name, holders]) => [...holders].map(([agentId, caching]) => [agentId, name, caching] as const)));
    const now = await getAccounts(t, [...seen.keys()], { consistent: true });
    const applied = seen;
    seen = new Map(
      [...applied]
        .map(([name, holders]) => [name, holdersOf(now.get(name), holders.keys())] as const)
        .filter(([name, holders]) => [...holders].some(([agentId, caching]) => applied.get(name)?.get(agentId) !== caching)),
    );
  }
  if (seen.size > 0) throw new VendorError('unavailable', 'accounts keep changing while the held index follows them; try again');
}

/**
 * Rewrites the entries of `agentIds` (the live agents, say) from the account items: the repair after
 * a crash between an item write and its entries. Reads every account, so it is an operator's job.
 */
export async function rebuildHeldAccounts(t: TableRef, agentIds: readonly string[]): Promise<void> {
  const wanted = new Map(agentIds.map((a) => [a, new Map<string, boolean>()]));
  for await (const page of allAccounts(t)) {
    for (const record of page) {
      for (const [agentId, caching] of holdersOf(record, agentIds)) if (caching !== undefined) wanted.get(agentId)?.set(record.name, caching);
    }
  }
  const writes: [string, string, boolean | undefined][] = [];
  for (const [agentId, held] of wanted) {
    const present = await readHeldAccounts(t, agentId);
    for (const entry of present) if (!held.has(entry.name)) writes.push([agentId, entry.name, undefined]);
    for (const [name, caching] of held) writes.push([agentId, name, caching]);
  }
  await writeEntries(t, writes);
}
