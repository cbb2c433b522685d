import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log.ts';
import type { AgentMessage, ResourceEvents } from '../../shared/protocol/messages.ts';
import { createAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { listResources } from '../../shared/table/resources/objects.ts';
import { RawAgent, helloMessage } from '../../test/raw-agent.ts';
import { useTestTables } from '../../test/support/table.ts';
import { parseDriverGrpcConfig } from '../config.ts';
import { startDriver } from '../server.ts';
import { resourcesModuleWith } from './module.ts';

const TOKEN = 'token-number-one-0123';
const tables = useTestTables();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * The table, with the account reads of the caching epoch rule for `account` held until `release()`
 * (or failing as throttled while `failing` is set): one account's table trouble, the others' table fine.
 */
async function troubledTable(table: TableRef, account: string) {
  const endpoint = await table.client.config.endpoint?.();
  if (endpoint === undefined) throw new Error('the table client has no endpoint');
  const own = createDocumentClient({ endpoint: `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port ?? 80}`, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  cleanups.push(() => own.destroy());
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const state = { failing: false, held: 0 };
  const send = async (command: unknown) => {
    if (command instanceof GetCommand && JSON.stringify(command.input.Key).includes(account)) {
      if (state.failing) throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client' });
      state.held++;
      await released;
    }
    return (own.send as (c: unknown) => Promise<unknown>)(command);
  };
  const client = Object.create(own, { send: { value: send } }) as TableRef['client'];
  return { table: { tableName: table.tableName, client }, release, state };
}

function events(account: string, name: string, rv: string): ResourceEvents {
  return {
    account,
    cachingEpoch: 1,
    changes: [{ group: '', kind: 'ConfigMap', namespace: 'a', name, resourceVersion: rv, deleted: false, object: JSON.stringify({ metadata: { name, resourceVersion: rv } }) }],
    syncs: [],
    progress: [],
    health: [],
    resumeQueryId: 0,
  };
}

async function setUp() {
  const table = await tables.fresh();
  for (const account of ['slow', 'quick']) {
    await createAccount(table, account, 1);
    await updateAccount(table, account, 1, { cachingAgentId: 'agent-1', cachingEpoch: 1 }, 1);
  }
  const troubled = await troubledTable(table, 'slow');
  const d = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
    table: troubled.table,
    log: silentLogger(),
    modules: [resourcesModuleWith({ writer: { progressIntervalMs: 0 } })],
  });
  cleanups.push(() => d.close(100));
  const a = RawAgent.messages({ port: d.port, token: TOKEN });
  cleanups.push(() => a.close());
  a.send(helloMessage('agent-1'));
  expect((await a.next()).body).toBe('welcome');
  const send = (seq: number, body: ResourceEvents) => a.send({ seq, ackSeq: 0, resourceEvents: body } satisfies AgentMessage);
  const stored = async (account: string) => (await listResources(table, account, {}, 10)).items.map((i) => `${i.name}@${i.resourceVersion}`);
  /** Every message the driver acknowledged ahead of its cumulative acknowledgement so far, in the messages read. */
  const ahead: number[] = [];
  /** The driver's cumulative acknowledgement now: a heartbeat is answered at once and carries it. */
  const ackNow = async (id: number) => {
    a.send({ ackSeq: 0, heartbeat: { id } });
    for (;;) {
      const m = await a.next();
      ahead.push(...m.ackedAhead);
      if (m.body === 'heartbeatAck' && m.heartbeatAck?.id === id) return m.ackSeq;
    }
  };
  const untilStored = async (account: string, want: string[]) => {
    while (JSON.stringify(await stored(account)) !== JSON.stringify(want)) await new Promise((r) => setTimeout(r, 20));
  };
  return { a, troubled, send, stored, ackNow, ahead, untilStored };
}

describe('the cache messages of one stream, per account', () => {
  it('store another account\'s batches while one account waits for the table, keep each account\'s in order, and acknowledge only what is done', async () => {
    const { a, troubled, send, stored, ackNow, ahead, untilStored } = await setUp();
    send(1, events('slow', 'cm', '1'));
    send(2, events('quick', 'cm', '1'));
    send(3, events('slow', 'cm', '2'));
    send(4, events('quick', 'other', '1'));
    // One after another, quick's batches would wait behind slow's held read.
    await untilStored('quick', ['cm@1', 'other@1']);
    expect(troubled.state.held).toBe(1);
    expect(await stored('slow')).toEqual([]);
    // The cumulative acknowledgement stays before slow's first batch; quick's are acknowledged ahead of
    // it (docs/protocol.md section 3), so the agent lets them go and quick's batches do not wait for slow.
    expect(await ackNow(7)).toBe(0);
    expect(ahead.sort()).toEqual([2, 4]);
    troubled.release();
    await untilStored('slow', ['cm@2']);
    for (;;) {
      const m = await a.next();
      ahead.push(...m.ackedAhead);
      if (m.body === 'ack' && m.ackSeq === 4) break;
    }
    // Slow's batches are covered by the cumulative acknowledgement alone; nothing is listed twice.
    expect(ahead.sort()).toEqual([2, 4]);
  });

  it('retry one account\'s batch while the table refuses its reads, without stalling the other account', async () => {
    const { a, troubled, send, ackNow, ahead, untilStored } = await setUp();
    troubled.state.failing = true;
    troubled.release();
    send(1, events('slow', 'cm', '1'));
    send(2, events('quick', 'cm', '1'));
    await untilStored('quick', ['cm@1']);
    expect(await ackNow(8)).toBe(0);
    expect(ahead).toEqual([2]);
    troubled.state.failing = false;
    await untilStored('slow', ['cm@1']);
    for (;;) {
      const m = await a.next();
      if (m.body === 'ack' && m.ackSeq === 2) break;
    }
  });
});
