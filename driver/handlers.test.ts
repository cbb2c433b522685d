import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../shared/clock.ts';
import { protocolError } from '../shared/protocol/problems.ts';
import { captureLogger } from '../test/capture-log.ts';
import { RawAgent, helloMessage } from '../test/raw-agent.ts';
import { useTestTables } from '../test/support/table.ts';
import { parseDriverGrpcConfig } from './config.ts';
import type { AgentMessageHandlers, DriverModuleFactory, DriverServices } from './handlers.ts';
import { DRIVER_MODULES } from './modules.ts';
import { startDriver } from './server.ts';

const TOKEN = 'handler-test-token-0001';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const tables = useTestTables();

const moduleWith = (name: string, handlers: AgentMessageHandlers): DriverModuleFactory => () => ({ name, handlers });

async function start(modules: readonly DriverModuleFactory[]) {
  const d = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
    table: await tables.fresh(),
    log: captureLogger().log,
    modules,
  });
  cleanups.push(() => d.close(50));
  return d;
}

async function driverWith(handlers: AgentMessageHandlers): Promise<RawAgent> {
  const d = await start([moduleWith('probe', handlers)]);
  const a = RawAgent.messages({ port: d.port, token: TOKEN });
  cleanups.push(() => a.close());
  a.send(helloMessage('agent-1'));
  expect(await a.next()).toMatchObject({ welcome: {} });
  return a;
}

describe('driver modules and their message handlers', () => {
  it('the production set handles every agent message kind once: assignment results, resource events, resume queries, pod metrics, operation results', async () => {
    const services: DriverServices = {
      table: await tables.fresh(),
      clock: systemClock,
      log: captureLogger().log,
      replicaId: 'r1',
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
      sessions: () => [],
      holdingChanged: () => undefined,
    };
    const kinds = DRIVER_MODULES.flatMap((factory) => Object.keys(factory(services).handlers ?? {}));
    expect(kinds.sort()).toEqual(['assignmentResult', 'operationResult', 'podMetrics', 'resourceEvents', 'resumeQuery']);
  });

  it('two modules handling one kind is refused when the driver starts', async () => {
    const a = moduleWith('a', { resourceEvents: () => undefined });
    const b = moduleWith('b', { resourceEvents: () => undefined });
    await expect(start([a, b])).rejects.toThrow('two driver modules handle resourceEvents');
  });

  it('get each message with the session, and a reliable one is acknowledged once its handler resolves', async () => {
    const seen: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let taken = () => {};
    const first = new Promise<void>((r) => (taken = r));
    const a = await driverWith({
      resourceEvents: async (m, session) => {
        seen.push(`${session.agentId}:${m.body.account}:${m.seq}`);
        taken();
        await gate;
      },
      resumeQuery: async (m, session) => {
        seen.push(`query ${m.body.queryId}`);
        await session.send({ kind: 'resumeInfo', body: { queryId: m.body.queryId, account: m.body.account, accepted: true } });
      },
    });
    a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1 } });
    a.send({ resumeQuery: { queryId: 9, account: 'prod' } });
    await first;
    // Handled in order: the query waits behind the unfinished batch, and nothing is acknowledged yet.
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['agent-1:prod:1']);
    release();
    const next = await a.next();
    const after = next.ack !== undefined ? await a.next() : next;
    expect(seen).toEqual(['agent-1:prod:1', 'query 9']);
    expect(after).toMatchObject({ resumeInfo: { queryId: 9, account: 'prod', accepted: true } });
    expect(Math.max(next.ackSeq, after.ackSeq)).toBe(1);
  });

  it('assignment results for different accounts are handled side by side, in order per account, and acknowledged only as far as all are done', async () => {
    const seen: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let otherDone = () => {};
    const other = new Promise<void>((r) => (otherDone = r));
    const a = await driverWith({
      assignmentResult: async (m) => {
        seen.push(`${m.body.account}:${m.body.generation}`);
        if (m.body.account === 'slow' && Number(m.body.generation) === 1) await gate;
        if (m.body.account === 'quick') otherDone();
      },
    });
    a.send({ seq: 1, assignmentResult: { account: 'slow', generation: 1, ok: true } });
    a.send({ seq: 2, assignmentResult: { account: 'slow', generation: 2, ok: true } });
    a.send({ seq: 3, assignmentResult: { account: 'quick', generation: 1, ok: true } });
    // Handled one at a time, `quick` would wait behind `slow` forever.
    await other;
    expect(seen).toEqual(['slow:1', 'quick:1']);
    // `quick` (seq 3) is done, but seq 1 is not: nothing may be acknowledged yet.
    await new Promise((r) => setTimeout(r, 50));
    expect(a.take().filter((m) => m.ackSeq > 0)).toEqual([]);
    release();
    let acked = 0;
    while (acked < 3) acked = Math.max(acked, (await a.next()).ackSeq);
    expect(seen).toEqual(['slow:1', 'quick:1', 'slow:2']);
  });

  it('a handler that refuses a message by name ends the stream with that message number', async () => {
    const a = await driverWith({
      resourceEvents: () => {
        throw protocolError('malformed', 'not this one');
      },
    });
    a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1 } });
    const s = await a.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.metadata.get('vendor-protocol-seq')).toEqual(['1']);
  });

  it('bodies without a handler are still refused as unsupported', async () => {
    const a = await driverWith({ resourceEvents: () => undefined });
    a.send({ seq: 1, operationResult: { operationId: 'op-1', account: 'prod', attempt: 1 } });
    const s = await a.status;
    expect(s.metadata.get('vendor-protocol-problem')).toEqual(['unsupported_message']);
  });
});
