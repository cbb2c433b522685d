import { describe, expect, it, vi } from 'vitest';
import { isChangePartition } from '../../shared/table/accounts/keys.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { getAccounts } from '../../shared/table/accounts/records.ts';
import { AGENT_TOKEN, useAccountsWorld } from '../support/accounts-world.ts';
import { ProtocolAgent } from '../support/protocol-agent.ts';
import { everyFeedItem } from '../support/sharded-items.ts';

const world = useAccountsWorld();
const N = 60;
const WAIT = { timeout: 60_000, interval: 50 };

/** A client of its own for the world's table that counts the BatchWriteItems appending feed entries. */
function countingFeedWrites(): { table: TableRef; feedWrites: () => number } {
  const client = createDocumentClient({ endpoint: world.tables.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  let n = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { PutRequest?: { Item?: { pk?: unknown } } }[]> };
      const items = Object.values(input.RequestItems ?? {})[0] ?? [];
      // The item as marshalled ({ S: 'CHANGE#3' }) by the time the client's own stack sees it.
      const feedEntry = (pk: unknown) => isChangePartition(pk) || isChangePartition((pk as { S?: unknown } | undefined)?.S);
      if (String(context.commandName).startsWith('BatchWrite') && items.some((r) => feedEntry(r.PutRequest?.Item?.pk))) n++;
      return next(args);
    },
    { step: 'initialize', name: 'countFeedWrites' },
  );
  return { table: { client, tableName: world.table.tableName }, feedWrites: () => n };
}

describe('a hand-out the lead writes for agents of other replicas (docs/protocol.md#assignment-across-replicas)', () => {
  it('the zone\'s other agent gets the hand-out the lead wrote for it from the feed, not at its replica\'s look again', async () => {
    const names = Array.from({ length: N }, (_, i) => `acct-${String(i).padStart(3, '0')}`);
    await world.fresh(names.map((name) => ({ name })));
    // a1 sorts first, so replica-1 leads every hand-out. replica-2 reads the feed every second and
    // would look again at the accounts it left to the lead after four (4 poll intervals); it starts
    // once a1 is connected (it reads who is live when it starts) and does not sweep again, so no
    // spread pass of its own settles the accounts while they are handed out.
    const counted = countingFeedWrites();
    const one = await world.driver({ replicaId: 'replica-1', table: counted.table });
    const agents = [new ProtocolAgent({ target: `127.0.0.1:${one.port}`, agentId: 'a1', zone: 'z', token: AGENT_TOKEN })];
    const looks = () => world.driverLogs.lines.filter((l) => l.msg === 'looking again at an account left to the hand-out lead').length;
    try {
      await vi.waitFor(() => expect(one.sessions()).toHaveLength(1), WAIT);
      const two = await world.driver({ replicaId: 'replica-2', assignment: { pollIntervalMs: 1_000, sweepIntervalMs: 600_000 } });
      agents.push(new ProtocolAgent({ target: `127.0.0.1:${two.port}`, agentId: 'a2', zone: 'z', token: AGENT_TOKEN }));
      await vi.waitFor(() => expect(two.sessions()).toHaveLength(1), WAIT);
      expect((await world.call('POST', '/vendor/accounts', names.map((name) => ({ name, zoneId: 'z' })))).status).toBe(200);
      // replica-1 sees a2 live (its session item) at its next sweep.
      await new Promise((r) => setTimeout(r, 300));
      expect((await world.call('PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
      await vi.waitFor(async () => {
        const records = await getAccounts(world.table, names, { consistent: true });
        expect([...records.values()].filter((r) => r.agents.a1?.ok === true && r.agents.a2?.ok === true)).toHaveLength(N);
      }, WAIT);
      expect(names.every((n) => agents[1]!.held(n) !== undefined)).toBe(true);
      // Every account reached a2 through the lead's feed entry: replica-2 never had to look again.
      expect(looks()).toBe(0);
      // What it costs: one feed entry per account besides the API's (the caching election's news, when
      // a2 was elected, is the same entry).
      const feed = await everyFeedItem(world.table);
      const perAccount = new Map<string, number>();
      for (const item of feed) perAccount.set(item.name as string, (perAccount.get(item.name as string) ?? 0) + 1);
      for (const n of names) expect(perAccount.get(n)).toBe(2);
      // And the lead's 60 entries go in a few BatchWriteItems (25 to a write at most), not one per hand-out.
      expect(counted.feedWrites()).toBeLessThanOrEqual(8);
    } finally {
      for (const a of agents) a.stop();
    }
  }, 120_000);
});
