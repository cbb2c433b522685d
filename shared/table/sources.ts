import { createHash } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, Definition, DefinitionSettings, SourceKind } from '../accounts/model.ts';
import type { AccountSettings } from '../accounts/schema.ts';
import { createAccount, deleteAccount, removeDefinition, setDefinition, updateAccount } from './accounts.ts';
import { appendChanges } from './changes.ts';
import type { TableRef } from './client.ts';
import { sourceMemberKey, sourcePk } from './keys.ts';
import { queryAll } from './query.ts';
import { rankAdd, rankRemove } from './rank.ts';

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

export function agentSourceId(agentId: string): string {
  return `agent:${agentId}`;
}

export interface SyncResult {
  /** Names whose definition from this source was added or changed. */
  upserted: string[];
  removed: string[];
  unchanged: number;
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

async function members(t: TableRef, sourceId: string): Promise<Map<string, string | undefined>> {
  const items = await queryAll(t, {
    TableName: t.tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': sourcePk(sourceId) },
  });
  return new Map(items.map((item) => [item.sk as string, item.hash as string | undefined]));
}

/** A migrated, active account whose definition changed is queued again so agents get the new settings. */
async function requeueIfActive(t: TableRef, record: AccountRecord, now: number): Promise<void> {
  if (record.registration === undefined || record.state !== 'ACTIVE') return;
  try {
    const after = await updateAccount(t, record.name, record.version, { generation: record.generation + 1 }, now);
    await appendChanges(t, [{ name: record.name, action: 'assign', generation: after.generation, at: now }]);
  } catch (err) {
    // Someone else changed the account meanwhile and queued it themselves, or the reconcile will.
    if ((err as { code?: string }).code !== 'precondition_failed') throw err;
  }
}

async function upsert(t: TableRef, name: string, sourceId: string, def: Definition, hash: string, now: number): Promise<void> {
  // Membership first, without a hash: a crash before the hash is set makes the next sync redo this name.
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: sourceMemberKey(sourceId, name) }));
  let record = await setDefinition(t, name, sourceId, def, now);
  if (record === undefined) {
    await createAccount(t, name, now);
    record = await setDefinition(t, name, sourceId, def, now);
  }
  await rankAdd(t, name);
  if (record !== undefined) await requeueIfActive(t, record, now);
  await t.client.send(
    new UpdateCommand({
      TableName: t.tableName,
      Key: sourceMemberKey(sourceId, name),
      UpdateExpression: 'SET #hash = :hash',
      ExpressionAttributeNames: { '#hash': 'hash' },
      ExpressionAttributeValues: { ':hash': hash },
    }),
  );
}

async function remove(t: TableRef, name: string, sourceId: string, now: number): Promise<void> {
  const after = await removeDefinition(t, name, sourceId, now);
  if (after !== undefined && Object.keys(after.defs).length === 0) {
    // No source defines the account any more: it goes, and agents holding it are told to drop it.
    if (await deleteAccount(t, name, after.version)) {
      if (after.registration !== undefined) {
        await appendChanges(t, [{ name, action: 'remove', generation: after.generation + 1, at: now }]);
      }
      await rankRemove(t, name);
    }
  } else if (after !== undefined) {
    await requeueIfActive(t, after, now);
  }
  await t.client.send(new DeleteCommand({ TableName: t.tableName, Key: sourceMemberKey(sourceId, name) }));
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
  concurrency = 8,
): Promise<SyncResult> {
  const current = await members(t, source.id);
  const wanted = new Map(accounts.map((a) => [a.name, a]));
  const result: SyncResult = { upserted: [], removed: [], unchanged: 0 };
  const work: (() => Promise<void>)[] = [];
  for (const [name, account] of wanted) {
    const { name: _name, ...settings } = account;
    const def = definitionOf(source, settings, now);
    const hash = definitionHash(def);
    if (current.get(name) === hash) {
      result.unchanged++;
      continue;
    }
    result.upserted.push(name);
    work.push(() => upsert(t, name, source.id, def, hash, now));
  }
  for (const name of current.keys()) {
    if (wanted.has(name)) continue;
    result.removed.push(name);
    work.push(() => remove(t, name, source.id, now));
  }
  await runBounded(work, concurrency);
  return result;
}

/** Runs tasks with at most `limit` in flight; the first failure is thrown after the others settle. */
export async function runBounded(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const task = tasks[next++] as () => Promise<void>;
      try {
        await task();
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  if (errors.length > 0) throw errors[0];
}

/**
 * The static accounts an agent announces at hello (`source: static-agent-config`, precedence 1000),
 * replacing what that agent announced before.
 */
export function putAgentStaticAccounts(
  t: TableRef,
  agentId: string,
  zoneId: string,
  accounts: readonly AccountSettings[],
  now: number,
): Promise<SyncResult> {
  return syncSource(t, { id: agentSourceId(agentId), kind: 'static-agent-config', agentId, zoneId }, accounts, now);
}

/** Removes everything an agent announced (when its session ends for good). */
export function removeAgentStaticAccounts(t: TableRef, agentId: string, now: number): Promise<SyncResult> {
  return syncSource(t, { id: agentSourceId(agentId), kind: 'static-agent-config', agentId }, [], now);
}
