/**
 * The replica's table round trips for one activation (docs/table.md#the-held-index): the read of the
 * account, the hand-out write (the entry and the caching election together), the write of the
 * agent's answer, and the held index following that answer (its entry in a batch write, then the consistent read
 * back). A hand-out changes no one's holding, so it writes no held entry and goes to the agent at
 * once. Real driver and agent over gRPC, the test API server over TLS, dynalite.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { readHeldAccounts } from '../../shared/table/accounts/held.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { PK_PREFIX } from '../../shared/table/core/keys.ts';
import type { AccountWorkerFactory, WorkerHost } from '../../agent/accounts/account-worker.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

interface Key {
  pk?: unknown;
  sk?: unknown;
}

/** The keys a command names (single-item commands and batch reads and writes). */
function keysOf(input: Record<string, unknown>): Key[] {
  const keys: Key[] = [];
  if (input.Key !== undefined) keys.push(input.Key as Key);
  if (input.Item !== undefined) keys.push(input.Item as Key);
  for (const request of Object.values((input.RequestItems ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(request)) for (const w of request as { PutRequest?: { Item: Key }; DeleteRequest?: { Key: Key } }[]) keys.push(w.PutRequest?.Item ?? w.DeleteRequest?.Key ?? {});
    else keys.push(...(((request as { Keys?: Key[] }).Keys ?? []) as Key[]));
  }
  return keys;
}

/** The replica's own table client, noting every command that names an item of `account`. */
function notingTable(tableName: string, endpoint: string, account: string): { table: TableRef; noted: string[] } {
  const noted: string[] = [];
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const keys = keysOf(args.input as Record<string, unknown>).filter((k) => k.sk === account);
      if (keys.length > 0) noted.push(`${context.commandName}:${keys.map((k) => (String(k.pk).startsWith(PK_PREFIX.held) ? 'held' : 'account')).join(',')}`);
      return next(args);
    },
    { step: 'initialize', name: 'noteAccountTrips' },
  );
  return { table: { client, tableName }, noted };
}

describe('the agent answers an assignment before the account\'s workers start', () => {
  it('sends its answer for a newly held account ahead of anything the workers send', async () => {
    await world.fresh([{ name: 'one', context: 'test' }, { name: 'two', context: 'test' }]);
    const driver = await world.driver();
    const events: string[] = [];
    let watched: WorkerHost | undefined;
    const recorder: AccountWorkerFactory = (account, host) => {
      if (watched === undefined) {
        // From the first account on, every response the holder sends through this host is noted.
        watched = host;
        const respond = host.respond.bind(host);
        host.respond = (body) => {
          if (body.kind === 'assignmentResult') events.push(`answer:${body.body.account}`);
          return respond(body);
        };
      }
      events.push(`workers:${account.name}`);
      return undefined;
    };
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra', workers: [recorder] });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);
    await world.activate('one', 'vendor-agent_infra');
    await vi.waitFor(async () => expect((await world.account('one')).agents).toHaveLength(1), WAIT);
    await world.activate('two', 'vendor-agent_infra');
    await vi.waitFor(async () => expect((await world.account('two')).agents).toHaveLength(1), WAIT);
    expect(events.filter((e) => e.endsWith(':two'))).toEqual(['answer:two', 'workers:two']);
  });
});

describe('the round trips of one activation in the replica', () => {
  it('reads the account, writes the hand-out, writes the answer, then the held entry and its read back: five, none for the hand-out in the held index', async () => {
    await world.fresh([{ name: 'prod', context: 'test' }]);
    const { table, noted } = notingTable(world.table.tableName, world.tables.endpoint, 'prod');
    // Sweeps and full reconciles far apart: only the activation touches the account.
    const driver = await world.driver({ table, assignment: { sweepIntervalMs: 60_000, fullReconcileIntervalMs: 600_000 } });
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra' });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);
    const before = noted.length;

    await world.activate('prod', 'vendor-agent_infra');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);
    // The held index follows the answer, just after the answer is recorded.
    await vi.waitFor(async () => expect(await readHeldAccounts(world.table, 'agent-a')).toEqual([{ name: 'prod', caching: true }]), WAIT);

    // The caching gate reads the item (GetItem) when the new cache's first messages come, beside the answer's settle.
    // The read back may come a moment after the entry shows.
    await vi.waitFor(() => expect(noted.slice(before).filter((n) => n !== 'GetItemCommand:account')).toHaveLength(5), WAIT);
    expect(noted.slice(before).filter((n) => n !== 'GetItemCommand:account')).toEqual([
      'BatchGetItemCommand:account', // the pump's read of the account the feed named
      'UpdateItemCommand:account', // the hand-out: the agent's entry and the caching election, one write
      'UpdateItemCommand:account', // the agent's answer
      'BatchWriteItemCommand:held', // the held index follows the answer (25 entries to a batch)
      'BatchGetItemCommand:account', // and reads the item back (docs/table.md#the-held-index)
    ]);
  });
});
