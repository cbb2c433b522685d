import { describe, expect, it } from 'vitest';
import { getAccount } from '../accounts/records.ts';
import { changesSince, cursorAt } from '../accounts/feed.ts';
import { putAgentStaticAccounts } from './agent-static.ts';
import { syncSource } from './sync.ts';
import { useTestTables } from '../../../test/support/table.ts';

const low = { id: 'plugin:low', kind: 'plugin' as const, precedence: 500 };

describe('a driver source changing an account an agent announces', () => {
  const tables = useTestTables();

  it('queues it again when a plugin definition comes or goes, so its agents learn who wins', async () => {
    const t = await tables.fresh();
    await putAgentStaticAccounts(t, 'agent-1', 'zone-a', [{ name: 'edge' }], 1);
    const before = (await getAccount(t, 'edge'))!.generation;

    await syncSource(t, low, [{ name: 'edge', context: 'plugin' }], 2);
    expect((await getAccount(t, 'edge'))!.generation).toBe(before + 1);

    await syncSource(t, low, [], 3);
    expect((await getAccount(t, 'edge'))!.generation).toBe(before + 2);
    expect((await changesSince(t, cursorAt(0), 10)).changes.filter((c) => c.name === 'edge' && c.at > 1)).toEqual([
      { name: 'edge', action: 'assign', generation: before + 1, at: 2 },
      { name: 'edge', action: 'assign', generation: before + 2, at: 3 },
    ]);
  });

  it('leaves an account no agent announces alone until it is activated', async () => {
    const t = await tables.fresh();
    await syncSource(t, low, [{ name: 'driver-only' }], 1);
    const generation = (await getAccount(t, 'driver-only'))!.generation;
    await syncSource(t, low, [{ name: 'driver-only', context: 'changed' }], 2);
    expect((await getAccount(t, 'driver-only'))!.generation).toBe(generation);
  });
});
