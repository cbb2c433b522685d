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
import { DeleteCommand, PutCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import { runBounded } from '../core/bounded.ts';
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

async function writeEntry(t: TableRef, agentId: string, name: string, caching: boolean | undefined): Promise<void> {
  if (caching === undefined) await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: heldKey(agentId, name) }));
  else await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...heldKey(agentId, name), caching } }));
}

const MAX_ROUNDS = 20;

/**
 * Makes the entries of `agentIds` for each account follow its item. `records` are the items the
 * caller just wrote (or, for an account it deleted, its last item with `gone`), `agentIds` the
 * agents whose results it changed or removed. Cost: one write per agent and account per round and
 * one consistent read per account per round (two rounds when nobody else writes).
 */
export async function followHeldAccounts(t: TableRef, changes: readonly { record: AccountRecord; agentIds: Iterable<string>; gone?: boolean }[]): Promise<void> {
  const agents = new Map(changes.map((c) => [c.record.name, [...c.agentIds]]));
  let seen = new Map(changes.filter((c) => (agents.get(c.record.name) ?? []).length > 0).map((c) => [c.record.name, holdersOf(c.gone ? undefined : c.record, agents.get(c.record.name) ?? [])]));
  for (let round = 0; round < MAX_ROUNDS && seen.size > 0; round++) {
    const writes = [...seen].flatMap(([name, holders]) => [...holders].map(([agentId, caching]) => () => writeEntry(t, agentId, name, caching)));
    await runBounded(writes, 8);
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
  const writes: (() => Promise<void>)[] = [];
  for (const [agentId, held] of wanted) {
    const present = await readHeldAccounts(t, agentId);
    for (const entry of present) if (!held.has(entry.name)) writes.push(() => writeEntry(t, agentId, entry.name, undefined));
    for (const [name, caching] of held) writes.push(() => writeEntry(t, agentId, name, caching));
  }
  await runBounded(writes, 8);
}
