import { BatchWriteCommand, PutCommand, QueryCommand, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { AccountSettings } from '../../accounts/settings.ts';
import { toAccount } from '../../accounts/view.ts';
import type { TableRef } from '../core/client.ts';
import { isAccountPartition } from '../accounts/keys.ts';
import { readAccessIndex } from '../accounts/access.ts';
import { changesSince, cursorAt } from '../accounts/feed.ts';
import { rankTotal } from '../accounts/rank.ts';
import { getAccount, getAccounts, updateAccount } from '../accounts/records.ts';
import { putAgentStaticAccounts } from './agent-static.ts';
import { sourcePk } from './keys.ts';
import { syncSource } from './sync.ts';
import { interceptedTable, type SentCommand } from '../../../test/support/intercepted-table.ts';

const file = { id: 'driver-config', kind: 'driver-config' as const };
const N = 200;
const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(3, '0')}`);
const defsOf = (list: readonly string[]): AccountSettings[] => list.map((name) => ({ name, kubeconfigFile: '/k/file' }));

type Sent = SentCommand;

/** The table with every command counted by its kind (`PutCommand`, `BatchWriteCommand`, ...). */
function counted(t: TableRef, intercept?: (command: Sent, send: (c: Sent) => Promise<unknown>) => Promise<unknown> | undefined) {
  const counts = new Map<string, number>();
  const table = interceptedTable(t, async (command, send) => {
    counts.set(command.constructor.name, (counts.get(command.constructor.name) ?? 0) + 1);
    return (await intercept?.(command, send)) ?? send(command);
  });
  const total = () => [...counts.values()].reduce((a, b) => a + b, 0);
  const of = (kind: string) => counts.get(kind) ?? 0;
  return { table, counts, total, of, reset: () => counts.clear() };
}

async function members(t: TableRef, sourceId: string): Promise<Map<string, unknown>> {
  const out = await t.client.send(
    new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': sourcePk(sourceId) }, ConsistentRead: true }),
  );
  return new Map((out.Items ?? []).map((item) => [item.sk as string, item.hash]));
}

async function accountVersions(t: TableRef): Promise<Map<string, number>> {
  return new Map([...(await getAccounts(t, names, { consistent: true }))].map(([name, r]) => [name, r.version]));
}

describe('a source sync of many definitions against dynalite', () => {
  const tables = useTestTables();

  it('writes new definitions with one table request each for the account item, the rest in batches', async () => {
    const t = await tables.fresh();
    const c = counted(t);
    const result = await syncSource(c.table, file, defsOf(names), 1);
    expect(result.upserted).toHaveLength(N);
    // One conditional put per new account item (and a few for the index chunks); memberships, their
    // hashes and the index settle's reads in batches.
    expect(c.of('PutCommand')).toBeLessThanOrEqual(N + 10);
    expect(c.of('BatchWriteCommand')).toBeLessThanOrEqual((2 * N) / 25 + 2);
    expect(c.of('UpdateCommand')).toBeLessThanOrEqual(10);
    expect(c.total() / N).toBeLessThan(1.2);
    expect(await rankTotal(t)).toBe(N);
    const stored = await members(t, file.id);
    expect([...stored.keys()].sort()).toEqual(names);
    expect([...stored.values()].every((hash) => typeof hash === 'string')).toBe(true);
    expect((await getAccount(t, 'acct-007'))?.defs['driver-config']).toEqual({ kind: 'driver-config', settings: { kubeconfigFile: '/k/file' }, at: 1 });
  });

  it('reads and writes nothing but the lock when the same file is synced again', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const c = counted(t);
    expect(await syncSource(c.table, file, defsOf(names), 2)).toEqual({ upserted: [], removed: [], unchanged: N });
    // The lock taken (its item tells the digest of what the last sync stored) and freed: nothing else.
    expect(Object.fromEntries(c.counts)).toEqual({ UpdateCommand: 2 });
  });

  it('reads the memberships, consistently, when the file changed', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const queries: unknown[] = [];
    const c = counted(t, (command) => {
      if (command instanceof QueryCommand) queries.push(command.input);
      return undefined;
    });
    expect(await syncSource(c.table, file, defsOf(names.slice(1)), 2)).toMatchObject({ removed: ['acct-000'], unchanged: N - 1 });
    // Consistently: a removal the previous holder of the lock just made must not look like a stored definition.
    expect(queries.filter((q) => (q as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':pk'] === sourcePk(file.id))).toEqual([
      expect.objectContaining({ ConsistentRead: true }),
    ]);
  });

  it('redoes a sync that stopped halfway, even when the file is back to what the sync before it stored', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const moved = names.map((name) => ({ name, kubeconfigFile: '/k/moved' }));
    // The replica stops before any membership hash of the new file is written.
    const c = counted(t, (command) => {
      const requests = command instanceof BatchWriteCommand ? ((command.input as BatchWriteCommandInput).RequestItems?.[t.tableName] ?? []) : [];
      if (requests.some((r) => (r.PutRequest?.Item as { hash?: string } | undefined)?.hash !== undefined)) return Promise.reject(new Error('replica stopped'));
      return undefined;
    });
    await expect(syncSource(c.table, file, moved, 2)).rejects.toThrow('replica stopped');
    expect((await getAccount(t, 'acct-000'))?.defs['driver-config']?.settings).toEqual({ kubeconfigFile: '/k/moved' });
    // The file as it was before: every definition written again, not skipped by the digest of that earlier sync.
    expect(await syncSource(t, file, defsOf(names), 3)).toMatchObject({ upserted: names, removed: [] });
    expect((await getAccount(t, 'acct-000'))?.defs['driver-config']?.settings).toEqual({ kubeconfigFile: '/k/file' });
    expect(await syncSource(t, file, defsOf(names), 4)).toEqual({ upserted: [], removed: [], unchanged: N });
  });

  it('sends again what a batch left unprocessed', async () => {
    const t = await tables.fresh();
    let left = 0;
    // Every first BatchWriteItem of a batch lands its first half only and hands back the rest, as a throttled table does.
    const retried = new Set<string>();
    const c = counted(t, (command, send) => {
      if (!(command instanceof BatchWriteCommand)) return undefined;
      const requests = (command.input as BatchWriteCommandInput).RequestItems?.[t.tableName] ?? [];
      const key = JSON.stringify(requests[0]);
      if (retried.has(key) || requests.length < 2) return undefined;
      const half = Math.floor(requests.length / 2);
      retried.add(JSON.stringify(requests[half]));
      left += requests.length - half;
      return send(new BatchWriteCommand({ RequestItems: { [t.tableName]: requests.slice(0, half) } }) as unknown as Sent).then(() => ({
        UnprocessedItems: { [t.tableName]: requests.slice(half) },
      }));
    });
    await syncSource(c.table, file, defsOf(names), 1);
    expect(left).toBeGreaterThan(N);
    const stored = await members(t, file.id);
    expect(stored.size).toBe(N);
    expect([...stored.values()].every((hash) => typeof hash === 'string')).toBe(true);
    expect(await syncSource(t, file, defsOf(names), 2)).toEqual({ upserted: [], removed: [], unchanged: N });
  });

  it('writes one changed definition among many, leaving the others as they are', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const before = await accountVersions(t);
    const c = counted(t);
    const edited = defsOf(names).map((a) => (a.name === 'acct-042' ? { ...a, context: 'changed' } : a));
    expect(await syncSource(c.table, file, edited, 2)).toEqual({ upserted: ['acct-042'], removed: [], unchanged: N - 1 });
    expect(c.total()).toBeLessThan(20);
    expect((await getAccount(t, 'acct-042'))?.defs['driver-config']?.settings).toEqual({ kubeconfigFile: '/k/file', context: 'changed' });
    const after = await accountVersions(t);
    expect([...after].filter(([name, v]) => before.get(name) !== v).map(([name]) => name)).toEqual(['acct-042']);
    expect(await syncSource(t, file, edited, 3)).toEqual({ upserted: [], removed: [], unchanged: N });
  });

  it('removes one definition among many, with its account, membership and index entry', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const c = counted(t);
    const kept = names.filter((n) => n !== 'acct-100');
    expect(await syncSource(c.table, file, defsOf(kept), 2)).toEqual({ upserted: [], removed: ['acct-100'], unchanged: N - 1 });
    expect(c.total()).toBeLessThan(25);
    expect(await getAccount(t, 'acct-100', { consistent: true })).toBeUndefined();
    expect((await members(t, file.id)).has('acct-100')).toBe(false);
    expect(await rankTotal(t)).toBe(N - 1);
    expect((await getAccounts(t, kept, { consistent: true })).size).toBe(N - 1);
  });

  it('keeps the definitions of other sources for the same names, and serves the one that wins', async () => {
    const t = await tables.fresh();
    const plugin = { id: 'plugin:first', kind: 'plugin' as const, precedence: 5 };
    await syncSource(t, plugin, [{ name: 'acct-003', context: 'from-plugin', permissions: [{ READ: ['dev'] }] }], 1);
    await putAgentStaticAccounts(t, 'agent-1', 'zone-a', [{ name: 'acct-150', context: 'from-agent' }], 1);
    // Another source creates one more of the names while this sync runs: just before its first account put.
    let raced = false;
    const c = counted(t, async (command) => {
      if (raced || !(command instanceof PutCommand) || !isAccountPartition((command.input as { Item?: { pk?: string } }).Item?.pk)) return undefined;
      raced = true;
      await putAgentStaticAccounts(t, 'agent-2', 'zone-b', [{ name: 'acct-199', context: 'raced-in' }], 1);
      return undefined;
    });
    await syncSource(c.table, file, defsOf(names), 2);
    expect(raced).toBe(true);
    const plugged = (await getAccount(t, 'acct-003', { consistent: true }))!;
    expect(Object.keys(plugged.defs).sort()).toEqual(['driver-config', 'plugin:first']);
    expect(toAccount(plugged)).toMatchObject({ name: 'acct-003', source: 'driver', config: { context: 'from-plugin' } });
    expect((await readAccessIndex(t)).get('acct-003')).toEqual(['dev']);
    const announced = (await getAccount(t, 'acct-150', { consistent: true }))!;
    expect(Object.keys(announced.defs).sort()).toEqual(['agent:agent-1', 'driver-config']);
    expect(toAccount(announced)).toMatchObject({ source: 'static-agent-config', zoneId: 'zone-a', config: { context: 'from-agent' } });
    const racedIn = (await getAccount(t, 'acct-199', { consistent: true }))!;
    expect(Object.keys(racedIn.defs).sort()).toEqual(['agent:agent-2', 'driver-config']);
    expect(toAccount(racedIn)).toMatchObject({ source: 'static-agent-config', zoneId: 'zone-b', config: { context: 'raced-in' } });
    expect(await rankTotal(t)).toBe(N);
  });

  it('queues the accounts agents hold again when their definitions change among many, in batched feed entries', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, defsOf(names), 1);
    const active = names.slice(0, 30);
    for (const name of active) {
      const r = (await getAccount(t, name, { consistent: true }))!;
      await updateAccount(t, name, r.version, { registration: { at: 1 }, state: 'ACTIVE', generation: 1 }, 1);
    }
    const c = counted(t);
    await syncSource(c.table, file, names.map((name) => ({ name, kubeconfigFile: '/k/moved' })), 10);
    const feed = await changesSince(t, cursorAt(0), 100);
    expect(feed.changes.map((ch) => ch.name).sort()).toEqual(active);
    expect(feed.changes.every((ch) => ch.action === 'assign' && ch.generation === 2 && ch.at === 10)).toBe(true);
    // 30 entries: two BatchWriteItems for the feed, beside those of the memberships.
    expect(c.of('BatchWriteCommand')).toBeLessThanOrEqual(2 + Math.ceil((2 * N) / 25) + 2);
  });
});
