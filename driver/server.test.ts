import { Client, credentials, makeGenericClientConstructor, status, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { allSessions, liveSessions, type Session } from '../shared/table/agents/sessions.ts';
import { captureLogger } from '../test/capture-log.ts';
import { recordResults, type RecordedResult } from '../test/connection-harness.ts';
import { RawAgent, helloMessage } from '../test/raw-agent.ts';
import { faultyTable } from '../test/support/store-faults.ts';
import { useTestTables } from '../test/support/table.ts';
import { accountsModule } from './accounts/module.ts';
import { parseDriverGrpcConfig } from './config.ts';
import { startDriver, type Driver, type DriverOptions } from './server.ts';
import { MAX_STATUS_DETAILS } from './grpc-status.ts';

const TOKEN = 'token-number-one-0123';
const SECOND_TOKEN = 'token-number-two-0123';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const tables = useTestTables();

/** A driver with the assignment module, or with `overrides.modules`. */
async function driver(overrides: Partial<DriverOptions> = {}, config: Record<string, unknown> = {}) {
  const table = await tables.fresh();
  const logs = captureLogger();
  const d = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN, SECOND_TOKEN] }, ...config }),
    table,
    log: logs.log,
    modules: [accountsModule],
    ...overrides,
  });
  cleanups.push(() => d.close(100));
  const sessions = async (): Promise<Session[]> => allSessions(table);
  const live = async (): Promise<string[]> => (await liveSessions(table, Date.now())).map((x) => x.agentId);
  return { d, table, logs, sessions, live };
}

/** `null` connects without a token. */
function agent(d: Driver, token: string | null = TOKEN): RawAgent {
  const a = RawAgent.messages({ port: d.port, ...(token === null ? {} : { token }) });
  cleanups.push(() => a.close());
  return a;
}

async function welcomed(d: Driver, agentId = 'agent-1'): Promise<RawAgent> {
  const a = agent(d);
  a.send(helloMessage(agentId));
  const welcome = await a.next();
  expect(welcome.body).toBe('welcome');
  return a;
}

describe('driver endpoint: authentication', () => {
  it('welcomes an agent with a valid token and records its session', async () => {
    const { d, sessions } = await driver({ replicaId: 'replica-a' });
    const a = agent(d);
    a.send(helloMessage('agent-1', { staticAccounts: [{ name: 'prod' }] }));
    const m = await a.next();
    expect(m.welcome).toMatchObject({
      driverReplicaId: 'replica-a',
      protocolVersion: 1,
      heartbeatIntervalMs: 10_000,
      leaseMs: 30_000,
      resume: { known: false },
    });
    const sessionId = m.welcome?.sessionId ?? '';
    expect(await sessions()).toMatchObject([
      { sessionId, agentId: 'agent-1', zoneId: 'vendor-agent_infra', replicaId: 'replica-a', staticAccountCount: 1 },
    ]);
    expect(d.sessions().map((s) => s.agentId)).toEqual(['agent-1']);
  });

  it('accepts every configured token', async () => {
    const { d } = await driver();
    const a = agent(d, SECOND_TOKEN);
    a.send(helloMessage('agent-2'));
    expect((await a.next()).body).toBe('welcome');
  });

  it('refuses a missing or wrong token with UNAUTHENTICATED and records nothing', async () => {
    const { d, sessions, logs } = await driver();
    for (const token of [null, 'not-a-token-we-know-0123']) {
      const a = agent(d, token);
      a.send(helloMessage('intruder'));
      const s = await a.status;
      expect(s.code).toBe(status.UNAUTHENTICATED);
      expect(s.details).toBe(token === null ? 'missing bearer token' : 'bearer token not accepted');
    }
    expect(await sessions()).toEqual([]);
    expect(d.sessions()).toEqual([]);
    expect(logs.text()).not.toContain('not-a-token-we-know-0123');
  });
});

describe('driver endpoint: health', () => {
  it('serves grpc.health.v1 for the server and the agent service', async () => {
    const { d } = await driver();
    const Health = makeGenericClientConstructor(healthService, 'Health');
    const client = new Health(`127.0.0.1:${d.port}`, credentials.createInsecure()) as unknown as Client & {
      check(req: { service: string }, cb: (err: ServiceError | null, res?: { status: string | number }) => void): void;
    };
    cleanups.push(() => client.close());
    const check = (service: string) =>
      new Promise<string | number>((resolve, reject) =>
        client.check({ service }, (err, res) => (err ? reject(err) : resolve(res?.status ?? ''))),
      );
    expect(await check('')).toBe('SERVING');
    expect(await check('vendor.agent.v1.AgentService')).toBe('SERVING');
    await expect(check('no.such.Service')).rejects.toMatchObject({ code: status.NOT_FOUND });
    d.health.setStatus('', 'NOT_SERVING');
    expect(await check('')).toBe('NOT_SERVING');
  });
});

describe('driver endpoint: assignment round trip', () => {
  it('sends a numbered assignment, resolves it on the agent ack, records the result and acks it', async () => {
    const results: RecordedResult[] = [];
    const { d } = await driver({ modules: [recordResults(results)] });
    const a = await welcomed(d);
    const session = d.sessions()[0];
    if (session === undefined) throw new Error('no session');
    const delivered = session.send({
      kind: 'assignAccount',
      body: { account: 'prod', generation: 3, kubeconfigRef: 'encryptedFile:k8s/prod', caching: true, cachingEpoch: 1 },
    });
    const assign = await a.next();
    expect(assign).toMatchObject({ seq: 1, body: 'assignAccount', assignAccount: { account: 'prod', generation: 3, caching: true } });
    a.send({ seq: 1, ackSeq: 1, assignmentResult: { account: 'prod', generation: 3, ok: false, message: 'invalid kubeconfig' } });
    await delivered;
    const ack = await a.next();
    expect(ack).toMatchObject({ body: 'ack', ackSeq: 1, seq: 0 });
    expect(results).toMatchObject([{ agentId: 'agent-1', result: { account: 'prod', ok: false, message: 'invalid kubeconfig' } }]);
  });

  it('answers heartbeats', async () => {
    const { d } = await driver();
    const a = await welcomed(d);
    a.send({ heartbeat: { id: 42 } });
    expect(await a.next()).toMatchObject({ body: 'heartbeatAck', heartbeatAck: { id: 42 } });
  });

  it('ends a stream that never says hello once the lease time has passed', async () => {
    const clock = new ManualClock(1_000);
    const { d } = await driver({ clock, modules: [] });
    const silent = agent(d);
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    await clock.advance(30_000);
    const s = await silent.status;
    expect(s.code).toBe(status.DEADLINE_EXCEEDED);
    expect(s.details).toBe('lease expired: nothing received from the agent for 30000 ms');
  });

  it('ends a session whose lease expires, judged by its own clock', async () => {
    const clock = new ManualClock(1_000);
    const { d, table } = await driver({ clock, modules: [] });
    const a = await welcomed(d);
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    await clock.advance(29_999);
    expect(d.sessions()).toHaveLength(1);
    await clock.advance(1);
    const s = await a.status;
    expect(s.code).toBe(status.DEADLINE_EXCEEDED);
    expect(s.details).toBe('lease expired: nothing received from the agent for 30000 ms');
    await vi.waitFor(async () => expect(await liveSessions(table, clock.now())).toEqual([]));
  });
});

describe('driver endpoint: protocol violations', () => {
  const cases: { name: string; send: (a: RawAgent) => void; problem: string; details: string | RegExp }[] = [
    { name: 'a message without a body', send: (a) => a.send({}), problem: 'malformed', details: 'message has no body' },
    {
      name: 'a heartbeat before hello',
      send: (a) => a.send({ heartbeat: { id: 1 } }),
      problem: 'out_of_order',
      details: 'expected hello as the first message, got heartbeat',
    },
    {
      name: 'an unknown protocol version',
      send: (a) => a.send(helloMessage('a', { protocolVersion: 7 })),
      problem: 'unsupported_protocol_version',
      details: 'unknown protocol version 7; this driver speaks 1',
    },
    {
      name: 'a hello without an agent id',
      send: (a) => a.send(helloMessage('')),
      problem: 'malformed',
      details: 'malformed hello: hello.agentId is required',
    },
    {
      name: 'hello twice',
      send: (a) => {
        a.send(helloMessage('a'));
        a.send(helloMessage('a'));
      },
      problem: 'out_of_order',
      details: 'hello sent twice',
    },
    {
      name: 'a sequence gap',
      send: (a) => {
        a.send(helloMessage('a'));
        a.send({ seq: 2, assignmentResult: { account: 'prod', generation: 1, ok: true } });
      },
      problem: 'out_of_order',
      details: 'expected sequence number 1, got 2',
    },
    {
      name: 'an ack of something never sent',
      send: (a) => {
        a.send(helloMessage('a'));
        a.send({ ackSeq: 5, heartbeat: { id: 1 } });
      },
      problem: 'bad_ack',
      details: 'acknowledgement 5 covers messages never sent (last sent: 0)',
    },
    {
      name: 'a result for an account never assigned',
      send: (a) => {
        a.send(helloMessage('a'));
        a.send({ seq: 1, assignmentResult: { account: 'ghost', generation: 1, ok: true } });
      },
      problem: 'unknown_account',
      details: 'assignment result for account ghost, which was not assigned to this agent',
    },
    {
      name: 'a message kind this driver does not handle yet',
      send: (a) => {
        a.send(helloMessage('a'));
        a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1 } });
      },
      problem: 'unsupported_message',
      details: 'resourceEvents is not handled by this driver yet',
    },
  ];

  it.each(cases)('answers $name with INVALID_ARGUMENT naming it, logs it, and keeps other streams', async ({ send, problem, details }) => {
    const { d, live, logs } = await driver();
    const healthy = await welcomed(d, 'healthy-agent');
    const bad = agent(d);
    send(bad);
    const s = await bad.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toMatch(details);
    expect(s.metadata.get('vendor-error-code')).toEqual(['protocol_error']);
    expect(s.metadata.get('vendor-protocol-problem')).toEqual([problem]);
    expect(logs.lines.some((l) => l['problem'] === problem && String(l['msg']).includes('agent stream ended'))).toBe(true);
    healthy.send({ heartbeat: { id: 7 } });
    expect(await healthy.next()).toMatchObject({ heartbeatAck: { id: 7 } });
    await vi.waitFor(async () => expect(await live()).toEqual(['healthy-agent']));
  });

  it('names the offending reliable message so the agent can drop it', async () => {
    const { d } = await driver();
    const a = agent(d);
    a.send(helloMessage('a'));
    a.send({ seq: 1, assignmentResult: { account: 'ghost', generation: 1, ok: true } });
    expect((await a.status).metadata.get('vendor-protocol-seq')).toEqual(['1']);
  });

  it('refuses a message with thousands of bad fields by a status that names the first few and reaches the agent', async () => {
    const { d } = await driver();
    const a = agent(d);
    a.send(helloMessage('a'));
    // Two bytes a kind on the wire; each one's missing name is an issue of its own, and there are too many of them.
    a.send({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1, health: Array.from({ length: 30_000 }, () => ({})) } });
    const s = await a.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toMatch(/^malformed resourceEvents: resourceEvents\.health\.0\.kind is required; .*; and 29991 more$/);
    expect(s.details.length).toBeLessThanOrEqual(MAX_STATUS_DETAILS);
    expect(s.metadata.get('vendor-protocol-seq')).toEqual(['1']);
  });

  it('refuses undecodable bytes as malformed', async () => {
    const { d } = await driver();
    const raw = RawAgent.bytes({ port: d.port, token: TOKEN });
    cleanups.push(() => raw.close());
    raw.send(Buffer.from([0xff, 0xff, 0xff]));
    const s = await raw.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toMatch(/^undecodable message: /);
    expect(s.metadata.get('vendor-protocol-problem')).toEqual(['malformed']);
  });

  it('refuses an oversize message with RESOURCE_EXHAUSTED, logs it, and keeps other streams', async () => {
    const { d, logs } = await driver({}, { grpc: { host: '127.0.0.1', port: 0, maxMessageBytes: 2048 } });
    const healthy = await welcomed(d, 'healthy-agent');
    const big = agent(d);
    big.send(helloMessage('big', { staticAccounts: Array.from({ length: 200 }, (_, i) => ({ name: `account-${i}` })) }));
    const s = await big.status;
    expect(s.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(s.details).toMatch(/larger than max/);
    expect(logs.lines.some((l) => String(l['msg']).startsWith('agent stream refused by the transport'))).toBe(true);
    healthy.send({ heartbeat: { id: 8 } });
    expect(await healthy.next()).toMatchObject({ heartbeatAck: { id: 8 } });
  });
});

describe('driver endpoint: what an agent says is checked before it is kept', () => {
  it('refuses a number the table cannot hold exactly, naming its field, before anything is recorded', async () => {
    const { d, sessions } = await driver();
    const healthy = await welcomed(d, 'healthy-agent');
    const a = agent(d);
    // 2^64 - 1: the decoder makes it 18446744073709552000, which no table write accepts.
    a.send(helloMessage('agent-1', { staticAccounts: [{ name: 'huge', settings: { maxResumableResourceAgeMs: '18446744073709551615' } }] }));
    const s = await a.status;
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toBe('malformed hello: hello.staticAccounts.0.settings.maxResumableResourceAgeMs is larger than 2^53 - 1');
    expect((await sessions()).map((x) => x.agentId)).toEqual(['healthy-agent']);
    const welcomedAgain = await welcomed(d, 'agent-2');
    welcomedAgain.send({ seq: 1, operationResult: { operationId: 'op', account: 'prod', attempt: 1, startedAtMs: '18446744073709551615' } });
    expect((await welcomedAgain.status).details).toBe('malformed operationResult: operationResult.startedAtMs is larger than 2^53 - 1');
    expect((await welcomedAgain.status).metadata.get('vendor-protocol-seq')).toEqual(['1']);
    healthy.send({ heartbeat: { id: 3 } });
    expect(await healthy.next()).toMatchObject({ heartbeatAck: { id: 3 } });
  });
});

describe('driver endpoint: a table that does not answer', () => {
  it('keeps the stream, answers heartbeats at once, and acknowledges a message only once its handler got through', async () => {
    const throttled = () => Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client' });
    let failures = 2;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const recorded: string[] = [];
    const { d, logs } = await driver({
      modules: [
        () => ({
          name: 'flaky-store',
          handlers: {
            assignmentResult: async ({ body }) => {
              await gate;
              if (failures-- > 0) throw throttled();
              recorded.push(body.account);
            },
          },
        }),
      ],
    });
    const a = await welcomed(d);
    const session = d.sessions()[0];
    if (session === undefined) throw new Error('no session');
    void session.send({ kind: 'assignAccount', body: { account: 'prod', generation: 1 } });
    expect((await a.next()).seq).toBe(1);
    a.send({ seq: 1, ackSeq: 1, assignmentResult: { account: 'prod', generation: 1, ok: true, message: 'ok' } });
    // The result waits on the table; liveness does not.
    a.send({ ackSeq: 1, heartbeat: { id: 5 } });
    expect(await a.next()).toMatchObject({ body: 'heartbeatAck', heartbeatAck: { id: 5 } });
    release();
    expect(await a.next()).toMatchObject({ body: 'ack', ackSeq: 1 });
    expect(recorded).toEqual(['prod']);
    expect(logs.lines.filter((l) => l.msg === 'the table is not answering: the message waits')).toMatchObject([{ level: 40, kind: 'assignmentResult', seq: 1 }]);
    expect(d.sessions()).toHaveLength(1);
  });

  it('refuses a hello it cannot record with UNAVAILABLE, and the agent may try again', async () => {
    const table = await tables.fresh();
    const faulty = await faultyTable(table, { maxAttempts: 1 });
    cleanups.push(() => faulty.faults.close());
    const { d } = await driver({ table: faulty.table });
    faulty.faults.set({ kind: 'error', name: 'ProvisionedThroughputExceededException' });
    const a = agent(d);
    a.send(helloMessage('agent-1'));
    const s = await a.status;
    expect(s.code).toBe(status.UNAVAILABLE);
    expect(s.details).toBe('the table is not answering: the session cannot be recorded; try again');
    faulty.faults.clear();
    await welcomed(d, 'agent-1');
  });
});

describe('driver endpoint: keepalive enforcement', () => {
  it('closes the connection of an agent that pings faster than allowed, and keeps others', async () => {
    const { d, logs } = await driver({}, {
      grpc: { host: '127.0.0.1', port: 0, keepalive: { minPingIntervalMs: 60_000, maxPingStrikes: 2 } },
    });
    const calm = await welcomed(d, 'calm-agent');
    const eager = RawAgent.messages({ port: d.port, token: TOKEN, channelOptions: { 'grpc.keepalive_time_ms': 10 } });
    cleanups.push(() => eager.close());
    eager.send(helloMessage('eager-agent'));
    expect((await eager.next()).body).toBe('welcome');
    // gRPC maps a GOAWAY with ENHANCE_YOUR_CALM to RESOURCE_EXHAUSTED.
    expect((await eager.status).code).toBe(status.RESOURCE_EXHAUSTED);
    expect(logs.lines.some((l) => String(l['msg']).includes('too_many_pings'))).toBe(true);
    calm.send({ heartbeat: { id: 1 } });
    expect(await calm.next()).toMatchObject({ heartbeatAck: { id: 1 } });
  });
});

describe('driver endpoint: start-up', () => {
  it('says which address it cannot listen on', async () => {
    const { d } = await driver();
    await expect(driver({}, { grpc: { host: '127.0.0.1', port: d.port } })).rejects.toThrow(`cannot listen on 127.0.0.1:${d.port}`);
  });
});
