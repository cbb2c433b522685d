import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { protocolError } from '../shared/protocol/problems.ts';
import { captureLogger } from '../test/capture-log.ts';
import { RawAgent, helloMessage } from '../test/raw-agent.ts';
import { parseDriverGrpcConfig } from './config.ts';
import { mergeHandlers, type MessageHandlers } from './handlers.ts';
import { MemorySessionStore } from './memory-session-store.ts';
import { startDriver } from './server.ts';

const TOKEN = 'handler-test-token-0001';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function driverWith(handlers: MessageHandlers): Promise<RawAgent> {
  const d = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
    store: new MemorySessionStore(),
    log: captureLogger().log,
    handlers,
  });
  cleanups.push(() => d.close(50));
  const a = RawAgent.messages({ port: d.port, token: TOKEN });
  cleanups.push(() => a.close());
  a.send(helloMessage('agent-1'));
  expect(await a.next()).toMatchObject({ welcome: {} });
  return a;
}

describe('message handlers', () => {
  it('are merged from several concerns; a kind handled twice or one the session owns is refused', () => {
    const a: MessageHandlers = { resourceEvents: () => undefined };
    const b: MessageHandlers = { operationResult: () => undefined };
    expect(Object.keys(mergeHandlers(a, b)).sort()).toEqual(['operationResult', 'resourceEvents']);
    expect(() => mergeHandlers(a, a)).toThrow('two handlers for resourceEvents');
    expect(() => mergeHandlers({ assignmentResult: () => undefined })).toThrow('assignmentResult is handled by the session itself');
  });

  it('get each message with the session, and a reliable one is acknowledged once its handler resolves', async () => {
    const seen: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const a = await driverWith({
      resourceEvents: async (m, session) => {
        seen.push(`${session.agentId}:${m.body.account}:${m.seq}`);
        await gate;
      },
      resumeQuery: async (m, session) => {
        await session.send({ kind: 'resumeInfo', body: { queryId: m.body.queryId, account: m.body.account, accepted: true } });
      },
    });
    a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1 } });
    a.send({ resumeQuery: { queryId: 9, account: 'prod' } });
    // Handled in order: the query waits behind the unfinished batch, and nothing is acknowledged yet.
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual(['agent-1:prod:1']);
    release();
    const next = await a.next();
    const after = next.ack !== undefined ? await a.next() : next;
    expect(after).toMatchObject({ resumeInfo: { queryId: 9, account: 'prod', accepted: true } });
    expect(Math.max(next.ackSeq, after.ackSeq)).toBe(1);
  });

  it('a handler that refuses a message by name ends the stream with that message number', async () => {
    const a = await driverWith({
      resourceEvents: (m) => {
        throw protocolError('malformed', 'not this one', { details: { seq: m.seq } });
      },
    });
    a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1 } });
    const s = await a.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.metadata.get('vendor-protocol-seq')).toEqual(['1']);
  });

  it('bodies without a handler are still refused as unsupported', async () => {
    const a = await driverWith({ resourceEvents: () => undefined });
    a.send({ seq: 1, operationResult: { operationId: 'op-1', account: 'prod' } });
    const s = await a.status;
    expect(s.metadata.get('vendor-protocol-problem')).toEqual(['unsupported_message']);
  });
});
