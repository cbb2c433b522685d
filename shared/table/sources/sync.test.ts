import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { everyAccountItem } from '../../../test/support/sharded-items.ts';
import { changesSince, cursorAt } from '../accounts/feed.ts';
import { rankTotal } from '../accounts/rank.ts';
import { getAccount, updateAccount } from '../accounts/records.ts';
import { putAgentStaticAccounts, removeAgentStaticAccounts } from './agent-static.ts';
import { definitionHash, syncSource } from './sync.ts';
import { interceptedTable } from '../../../test/support/intercepted-table.ts';

const file = { id: 'driver-config', kind: 'driver-config' as const };

describe('definition hash', () => {
  it('ignores the timestamp and key order, and sees content changes', () => {
    const a = definitionHash({ kind: 'plugin', precedence: 5, settings: { context: 'x', insecure: true }, at: 1 });
    const b = definitionHash({ at: 2, settings: { insecure: true, context: 'x' }, precedence: 5, kind: 'plugin' });
    expect(a).toBe(b);
    expect(definitionHash({ kind: 'plugin', precedence: 6, settings: { context: 'x', insecure: true }, at: 1 })).not.toBe(a);
  });
});

describe('source sync against dynalite', () => {
  const tables = useTestTables();

  it('adds, skips unchanged, updates and removes a source definitions, keeping the count', async () => {
    const t = await tables.fresh();
    const first = await syncSource(t, file, [{ name: 'a', context: 'c1' }, { name: 'b' }], 1);
    expect(first).toEqual({ upserted: ['a', 'b'], removed: [], unchanged: 0 });
    expect(await rankTotal(t)).toBe(2);
    const again = await syncSource(t, file, [{ name: 'a', context: 'c1' }, { name: 'b' }], 2);
    expect(again).toEqual({ upserted: [], removed: [], unchanged: 2 });
    const third = await syncSource(t, file, [{ name: 'a', context: 'c2' }], 3);
    expect(third).toEqual({ upserted: ['a'], removed: ['b'], unchanged: 0 });
    expect((await getAccount(t, 'a'))?.defs['driver-config']?.settings).toEqual({ context: 'c2' });
    expect(await getAccount(t, 'b')).toBeUndefined();
    expect(await rankTotal(t)).toBe(1);
  });

  it('keeps an account while another source still defines it', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'shared' }], 1);
    await putAgentStaticAccounts(t, 'agent-1', 'zone-a', [{ name: 'shared', context: 'agent' }], 2);
    await syncSource(t, file, [], 3);
    expect(Object.keys((await getAccount(t, 'shared'))?.defs ?? {})).toEqual(['agent:agent-1']);
    await removeAgentStaticAccounts(t, 'agent-1', 4);
    expect(await getAccount(t, 'shared')).toBeUndefined();
    expect(await rankTotal(t)).toBe(0);
  });

  it('stores static accounts with the agent and its zone, replacing its earlier announcement', async () => {
    const t = await tables.fresh();
    await putAgentStaticAccounts(t, 'agent-1', 'zone-a', [{ name: 's1' }, { name: 's2' }], 1);
    await putAgentStaticAccounts(t, 'agent-1', 'zone-a', [{ name: 's2' }], 2);
    expect(await getAccount(t, 's1')).toBeUndefined();
    expect((await getAccount(t, 's2'))?.defs['agent:agent-1']).toEqual({
      kind: 'static-agent-config',
      agentId: 'agent-1',
      zoneId: 'zone-a',
      settings: {},
      at: 1,
    });
  });

  it('queues an active migrated account again when its definition changes, and its removal when it goes', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'prod', context: 'old' }], 1);
    const before = (await getAccount(t, 'prod', { consistent: true }))!;
    await updateAccount(t, 'prod', before.version, { registration: { at: 1 }, state: 'ACTIVE', generation: 1 }, 2);
    await syncSource(t, file, [{ name: 'prod', context: 'new' }], 10);
    expect((await getAccount(t, 'prod'))?.generation).toBe(2);
    await syncSource(t, file, [], 20);
    const feed = await changesSince(t, cursorAt(0), 10);
    expect(feed.changes).toEqual([
      { name: 'prod', action: 'assign', generation: 2, at: 10 },
      { name: 'prod', action: 'remove', generation: 3, at: 20 },
    ]);
  });
  it('queues a changed definition of an active account even when another writer changes the item in between', async () => {
    const t = await tables.fresh();
    await syncSource(t, file, [{ name: 'prod', context: 'old' }], 1);
    const before = (await getAccount(t, 'prod', { consistent: true }))!;
    await updateAccount(t, 'prod', before.version, { registration: { at: 1 }, state: 'ACTIVE', generation: 1 }, 2);
    // Just before the sync raises the generation, an agent's answer lands on the same item.
    let interfered = false;
    const racing = interceptedTable(t, async (command, send) => {
      if (!interfered && (command.input.ExpressionAttributeNames as Record<string, string> | undefined)?.['#generation'] === 'generation') {
        interfered = true;
        const now = (await getAccount(t, 'prod', { consistent: true }))!;
        await updateAccount(t, 'prod', now.version, { lastAssignmentMsg: 'connected to https://cluster' }, 11);
      }
      return send(command);
    });
    await syncSource(racing, file, [{ name: 'prod', context: 'new' }], 10);
    expect(interfered).toBe(true);
    const after = (await getAccount(t, 'prod', { consistent: true }))!;
    expect(after).toMatchObject({ generation: 2, lastAssignmentMsg: 'connected to https://cluster' });
    expect((await changesSince(t, cursorAt(0), 10)).changes).toEqual([{ name: 'prod', action: 'assign', generation: 2, at: 10 }]);
  });

  it('keeps the rank index equal to the account items while sources add and remove the same names at once', async () => {
    // An agent's new session announces its static names while the sweep of its old session withdraws
    // them, and a second agent does the same: one writer's account item write and another's rank index
    // write interleave, and the index must still end up counting exactly the items.
    const t = await tables.fresh();
    const names = Array.from({ length: 4 }, (_, i) => `n${i}`);
    let seed = 20261124;
    const jitter = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 6000) / 1000;
    const after = <T>(ms: number, write: () => Promise<T>) => new Promise<T>((resolve, reject) => setTimeout(() => write().then(resolve, reject), ms));
    const accountItems = async () => (await everyAccountItem(t)).length;
    for (let round = 0; round < 100; round++) {
      await Promise.all([
        after(jitter(), () => putAgentStaticAccounts(t, 'agent-a', 'z', names.map((name) => ({ name })), round)),
        after(jitter(), () => removeAgentStaticAccounts(t, 'agent-a', round)),
        after(jitter(), () => putAgentStaticAccounts(t, 'agent-b', 'z', names.slice(round % 3).map((name) => ({ name })), round)),
        after(jitter(), () => removeAgentStaticAccounts(t, 'agent-b', round)),
      ]);
      expect(await rankTotal(t), `round ${round}`).toBe(await accountItems());
    }
    // A hundred rounds of table writes: about 17 s on an idle machine of two cores, several times that on a busy one.
  }, 180_000);
  it('keeps memberships and definitions of one source in step when syncs of that source overlap', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 6 }, (_, i) => `m${i}`);
    const query = async (pk: string) =>
      (await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true })))
        .Items ?? [];
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        putAgentStaticAccounts(t, 'agent-a', 'z', names.slice(round % 3).map((name) => ({ name, context: `r${round}` })), round),
        removeAgentStaticAccounts(t, 'agent-a', round),
        putAgentStaticAccounts(t, 'agent-a', 'z', names.slice(0, 4).map((name) => ({ name })), round),
      ]);
      const members = (await query('SOURCE#agent:agent-a')).map((item) => item.sk as string).sort();
      const accounts = await everyAccountItem(t);
      const defined = accounts.filter((item) => (item.defs as Record<string, unknown>)['agent:agent-a'] !== undefined).map((item) => item.sk as string).sort();
      expect(members, `round ${round}`).toEqual(defined);
      expect(await rankTotal(t), `round ${round}`).toBe(accounts.length);
    }
  });

  it('leaves the announcement of a newer session alone when the sweep of an older session of the agent comes late', async () => {
    const t = await tables.fresh();
    await putAgentStaticAccounts(t, 'agent-a', 'z', [{ name: 'kept' }], 1, 'session-1');
    await putAgentStaticAccounts(t, 'agent-a', 'z', [{ name: 'kept' }, { name: 'new' }], 2, 'session-2');
    expect(await removeAgentStaticAccounts(t, 'agent-a', 3, 'session-1')).toEqual({ upserted: [], removed: [], unchanged: 0, superseded: true });
    expect(Object.keys((await getAccount(t, 'kept'))?.defs ?? {})).toEqual(['agent:agent-a']);
    expect(await rankTotal(t)).toBe(2);
    expect(await removeAgentStaticAccounts(t, 'agent-a', 4, 'session-2')).toEqual({ upserted: [], removed: ['kept', 'new'], unchanged: 0 });
    expect(await getAccount(t, 'kept')).toBeUndefined();
    expect(await rankTotal(t)).toBe(0);
  });
});
