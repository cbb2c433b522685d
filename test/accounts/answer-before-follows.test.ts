/**
 * An agent's answer is recorded once its conditional write holds: the replica logs `assignment result`
 * and the account is served with the agent then, while the held index follows it on its own
 * (docs/table.md#the-held-index), and a held index that is slow to take its write holds up neither
 * that answer nor the next activation's. Real driver and agent over gRPC, the test API server over
 * TLS, dynalite; the driver's table client holds every held-index write until the test lets it go.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { readHeldAccounts } from '../../shared/table/accounts/held.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { PK_PREFIX } from '../../shared/table/core/keys.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

/** A client of the world's table whose held-index writes wait until `release()`. */
function heldIndexGate(tableName: string, endpoint: string): { table: TableRef; held(): number; release(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let held = 0;
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { PutRequest?: { Item: { pk?: unknown } } }[]> };
      const writesHeld =
        (context.commandName ?? '').startsWith('BatchWrite') &&
        Object.values(input.RequestItems ?? {}).some((rs) => Array.isArray(rs) && rs.some((r) => String(r.PutRequest?.Item.pk ?? '').startsWith(PK_PREFIX.held)));
      if (writesHeld) {
        held++;
        await gate;
      }
      return next(args);
    },
    { step: 'initialize', name: 'holdHeldIndexWrites' },
  );
  return { table: { client, tableName }, held: () => held, release: () => open() };
}

const results = (account: string) => world.driverLogs.lines.filter((l) => l.msg === 'assignment result' && l.account === account && l.outcome === 'recorded');

describe('an answer is recorded before the indexes follow it', () => {
  it('logs the answer and serves the agent while the held index write still waits, and the index is right once it lands', async () => {
    await world.fresh([{ name: 'first', context: 'test' }, { name: 'second', context: 'test' }]);
    const gate = heldIndexGate(world.table.tableName, world.tables.endpoint);
    const driver = await world.driver({ table: gate.table, assignment: { sweepIntervalMs: 60_000, fullReconcileIntervalMs: 600_000 } });
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra' });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);

    await world.activate('first', 'vendor-agent_infra');
    await vi.waitFor(() => expect(results('first')).toHaveLength(1), WAIT);
    expect((await world.account('first')).agents).toEqual([{ agentId: 'agent-a', caching: true }]);
    expect(gate.held()).toBe(1);
    expect(await readHeldAccounts(world.table, 'agent-a')).toEqual([]);

    // The next activation's answer does not queue behind the index write still waiting.
    await world.activate('second', 'vendor-agent_infra');
    await vi.waitFor(() => expect(results('second')).toHaveLength(1), WAIT);
    expect(await readHeldAccounts(world.table, 'agent-a')).toEqual([]);

    gate.release();
    await vi.waitFor(
      async () =>
        expect(await readHeldAccounts(world.table, 'agent-a')).toEqual([
          { name: 'first', caching: true },
          { name: 'second', caching: true },
        ]),
      WAIT,
    );
  });
});
