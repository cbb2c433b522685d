/**
 * The API appends a small activation's feed entry alongside its account write (docs/protocol.md#6a-assignment),
 * so a replica may read the entry before the write has landed. It then reads the entry again at its
 * next poll instead of counting it as done, and the account is handed out then, not at the next full
 * reconcile. Real driver and agent over gRPC, the test API server over TLS, dynalite.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { appendChanges } from '../../shared/table/accounts/feed.ts';
import { updateAccount } from '../../shared/table/accounts/records.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

describe('a feed entry read before the write it announces', () => {
  it('is read again at the next poll, and the account goes to the agent once the write lands', async () => {
    await world.fresh([{ name: 'early', context: 'test' }]);
    // Full reconciles far apart: only the feed can bring the account to the agent in time.
    const driver = await world.driver({ assignment: { sweepIntervalMs: 60_000, fullReconcileIntervalMs: 600_000 } });
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra' });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);
    await world.call('POST', '/vendor/accounts', [{ name: 'early', kubeconfigFile: world.kubeconfig('early'), zoneId: 'vendor-agent_infra' }]);
    const registered = await world.record('early');
    if (registered === undefined) throw new Error('the account was not registered');

    // The entry of the activation lands first, and a replica reads it while the account is still INACTIVE.
    const at = Date.now();
    await appendChanges(world.table, [{ name: 'early', action: 'assign', generation: registered.generation + 1, at }]);
    const reads = () => world.driverLogs.lines.filter((l) => l.msg === 'work feed read' && (l.accounts as string[]).includes('early')).length;
    await vi.waitFor(() => expect(reads()).toBeGreaterThanOrEqual(1), WAIT);

    // Then the write it announces, with no entry of its own.
    await updateAccount(world.table, 'early', registered.version, { state: 'ACTIVE', generation: registered.generation + 1 }, Date.now());
    await vi.waitFor(async () => expect((await world.account('early')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);
    expect(reads()).toBeGreaterThanOrEqual(2);
  });

  it('without a wake, reads the account again soon after, not a poll interval later', async () => {
    await world.fresh([{ name: 'soon', context: 'test' }]);
    await world.call('POST', '/vendor/accounts', [{ name: 'soon', kubeconfigFile: world.kubeconfig('soon'), zoneId: 'vendor-agent_infra' }]);
    const registered = await world.record('soon');
    if (registered === undefined) throw new Error('the account was not registered');
    // The driver's client: once the replica has read the account behind its entry, the write lands.
    let armed = false;
    let landed: Promise<unknown> | undefined;
    const client: DynamoDBDocumentClient = createDocumentClient({ endpoint: world.tables.endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (armed && landed === undefined && context.commandName === 'BatchGetItemCommand' && JSON.stringify(args.input).includes('"soon"')) {
          landed = updateAccount(world.table, 'soon', registered.version, { state: 'ACTIVE', generation: registered.generation + 1 }, Date.now());
        }
        return out;
      },
      { step: 'initialize', name: 'writeAfterTheRead' },
    );
    const table: TableRef = { client, tableName: world.table.tableName };
    // Polls far apart: only the early read again can bring the account before the next one.
    const driver = await world.driver({ table, assignment: { pollIntervalMs: 3_000, sweepIntervalMs: 60_000, fullReconcileIntervalMs: 600_000 } });
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, deployment: 'vendor-agent', namespace: 'infra' });
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['agent-a']), WAIT);

    armed = true;
    await appendChanges(world.table, [{ name: 'soon', action: 'assign', generation: registered.generation + 1, at: Date.now() }]);
    const reads = () => world.driverLogs.lines.filter((l) => l.msg === 'work feed read' && (l.accounts as string[]).includes('soon')).length;
    await vi.waitFor(() => expect(reads()).toBe(1), { ...WAIT, timeout: 30_000 });
    await vi.waitFor(async () => expect((await world.account('soon')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);
    await landed;
    // Handed out before the feed was read a second time.
    expect(reads()).toBe(1);
  });
});
