import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { captureLogger } from '../test/capture-log.ts';
import { ManualClock } from '../test/support/manual-clock.ts';
import { useTestTables } from '../test/support/table.ts';
import { parseDriverFile } from './config.ts';
import { startDriverProcess } from './main.ts';
import { interceptedTable } from '../test/support/intercepted-table.ts';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { PK } from '../shared/table/core/keys.ts';
import { createDocumentClient } from '../shared/table/core/client.ts';
import { getAccount, newAccountRecord } from '../shared/table/accounts/records.ts';
import { everyAccountItem } from '../test/support/sharded-items.ts';
import { operationKey, operationQueueKey } from '../shared/table/operations/keys.ts';
import { compress, createOperation, getOperation, openOperations } from '../shared/table/operations/operations.ts';
import { LAYOUT_MOVE_INTERVAL_MS } from '../shared/table/layout-move.ts';

describe("a driver replica's start with driver-defined accounts", () => {
  const tables = useTestTables();

  it('logs what the sync of its file added, removed and kept, and how long that took on its clock', async () => {
    const table = await tables.fresh();
    const accounts = Array.from({ length: 30 }, (_, i) => ({ name: `start-${i}`, kubeconfigFile: '/k/file' }));
    const file = parseDriverFile(stringify({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['start-sync-token-0123456789abcdef'] }, kubernetes: { accounts } }), 'vendor-driver.yml');
    const clock = new ManualClock(1_000_000);
    // The table's answers move this clock, as time passes for a replica whose sync waits on them.
    const slowTable = interceptedTable(table, (command, send) => send(command).finally(() => void clock.advance(1)));
    for (const [round, expected] of [
      [1, { added: 30, removed: 0, unchanged: 0 }],
      [2, { added: 0, removed: 0, unchanged: 30 }],
    ] as const) {
      const { log, lines: records } = captureLogger();
      const driver = await startDriverProcess({ file, table: slowTable, log, clock });
      await driver.close(0);
      const loaded = records.find((r) => r.msg === 'driver-defined accounts loaded');
      expect(loaded, `start ${round}`).toMatchObject(expected);
      expect(loaded?.ms, `start ${round}`).toBeGreaterThan(0);
    }
  });

  it('moves the account items of a table written before the shards to their shards before it syncs its file', async () => {
    // A client of its own: the replica instruments its client's stack, which the first test's replicas did to the shared one.
    const table = { ...(await tables.fresh()), client: createDocumentClient({ endpoint: tables.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }) };
    // `start-0` was registered and activated before; the file defines it too.
    for (const name of ['start-0', 'kept-1']) {
      await table.client.send(
        new PutCommand({ TableName: table.tableName, Item: { pk: PK.unshardedAccount, sk: name, ...newAccountRecord(name, 1), version: 3, state: 'ACTIVE', registration: { zoneId: 'z', at: 1 } } }),
      );
    }
    const file = parseDriverFile(stringify({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['start-sync-token-0123456789abcdef'] }, kubernetes: { accounts: [{ name: 'start-0', kubeconfigFile: '/k/file' }] } }), 'vendor-driver.yml');
    const { log, lines: records } = captureLogger();
    const driver = await startDriverProcess({ file, table, log, clock: new ManualClock(1_000_000) });
    await driver.close(0);
    expect(records.find((r) => r.msg === 'account items moved to their shards')).toMatchObject({ moved: 2 });
    expect(await getAccount(table, 'kept-1')).toMatchObject({ version: 3, state: 'ACTIVE', registration: { zoneId: 'z' } });
    // The old item (registered, active: the driver has since settled it, with no agent of its zone),
    // with the file's definition added to it: not a fresh item beside it.
    const started = await getAccount(table, 'start-0');
    expect(started).toMatchObject({ registration: { zoneId: 'z' }, defs: { 'driver-config': { settings: { kubeconfigFile: '/k/file' } } } });
    expect(started?.version).toBeGreaterThan(3);
    expect((await everyAccountItem(table)).map((item) => item.sk)).toEqual(['kept-1', 'start-0']);
  });

  it('moves the operations of a table written before the shards to their shards before it serves', async () => {
    const table = { ...(await tables.fresh()), client: createDocumentClient({ endpoint: tables.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }) };
    const stored = await createOperation(table, { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: 'k', requestHash: 'h', request: compress({ action: 'scale', targets: [], replicas: 1 }), record: { action: 'scale', objects: 1 }, now: 1_000_000 });
    // As the earlier layout kept them: the operation and its queue entry in one partition each.
    for (const [key, pk] of [[operationKey(stored.record.id), PK.unshardedOperation], [operationQueueKey(stored.record.id), PK.unshardedOperationQueue]] as const) {
      const item = (await table.client.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item;
      await table.client.send(new PutCommand({ TableName: table.tableName, Item: { ...item, pk } }));
      await table.client.send(new DeleteCommand({ TableName: table.tableName, Key: key }));
    }
    expect(await getOperation(table, stored.record.id)).toBeUndefined();
    const file = parseDriverFile(stringify({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['start-sync-token-0123456789abcdef'] } }), 'vendor-driver.yml');
    const { log, lines: records } = captureLogger();
    const driver = await startDriverProcess({ file, table, log, clock: new ManualClock(1_000_000) });
    await driver.close(0);
    expect(records.find((r) => r.msg === 'operation items moved to their shards')).toMatchObject({ requests: 0, operations: 1, queueEntries: 1 });
    expect(await getOperation(table, stored.record.id)).toEqual(stored.record);
    expect((await openOperations(table)).map((e) => e.id)).toEqual([stored.record.id]);
  });

  it('moves again, once an interval while it runs, what a component of the earlier layout writes after its start, and not after it stops', async () => {
    const table = { ...(await tables.fresh()), client: createDocumentClient({ endpoint: tables.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }) };
    const file = parseDriverFile(stringify({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['start-sync-token-0123456789abcdef'] } }), 'vendor-driver.yml');
    const { log, lines: records } = captureLogger();
    const clock = new ManualClock(1_000_000);
    // As an API of the earlier layout writes a registration during an update.
    const writeOld = (name: string) =>
      table.client.send(new PutCommand({ TableName: table.tableName, Item: { pk: PK.unshardedAccount, sk: name, ...newAccountRecord(name, 1), version: 1 } }));
    const oldNames = async () =>
      ((await table.client.send(new QueryCommand({ TableName: table.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.unshardedAccount }, ConsistentRead: true }))).Items ?? []).map((i) => i.sk);
    const driver = await startDriverProcess({ file, table, log, clock });
    try {
      await writeOld('late-1');
      await clock.advance(LAYOUT_MOVE_INTERVAL_MS - 1);
      expect(await oldNames()).toEqual(['late-1']);
      await clock.advance(1);
      // The round ends (and says what it moved) once a read finds the old partition empty.
      await vi.waitFor(() => expect(records.filter((r) => r.msg === 'account items moved to their shards')).toEqual([expect.objectContaining({ moved: 1 })]));
      expect((await everyAccountItem(table)).map((item) => item.sk)).toEqual(['late-1']);
      expect(await oldNames()).toEqual([]);
    } finally {
      await driver.close(0);
    }
    // Stopped: nothing of the replica waits for a later round.
    expect(clock.pendingSleeps).toBe(0);
    await writeOld('after-stop');
    await clock.advance(2 * LAYOUT_MOVE_INTERVAL_MS);
    expect(await oldNames()).toEqual(['after-stop']);
  });
});
