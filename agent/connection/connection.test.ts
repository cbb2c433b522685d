import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import type { AgentBody, AgentMessage__Output, DriverMessage } from '../../shared/protocol/messages.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import { allSessions, liveSessions } from '../../shared/table/agents/sessions.ts';
import { Harness, TOKENS, plain } from '../../test/connection-harness.ts';

/** Connections are real gRPC streams: on a loaded machine they take longer than vi.waitFor's default second. */
const WAIT = { timeout: 10_000, interval: 20 };

const h = new Harness();
afterEach(() => h.cleanup());

describe('agent connection: authentication', () => {
  it('connects with an accepted token and says hello with its identity and static accounts', async () => {
    const { driver, table } = await h.driver();
    const agent = h.agent(plain(driver.port), { hello: { staticAccounts: [{ name: 'prod', settings: { namespaces: ['web'] } }] } });
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
    const [session] = await liveSessions(table, Date.now());
    expect(session).toMatchObject({ agentId: 'agent-1', zoneId: 'vendor-agent_infra', agentVersion: '0.1.0', staticAccountCount: 1 });
    expect((await getAccount(table, 'prod'))?.defs['agent:agent-1']).toMatchObject({ kind: 'static-agent-config', settings: { namespaces: ['web'] } });
    expect(agent.connection.sessionId).toBe(session?.sessionId);
  });

  it('connects with each of several valid tokens', async () => {
    const { driver, table } = await h.driver();
    h.agent(plain(driver.port, { auth: { token: TOKENS[0] } }), { agentId: 'a' });
    h.agent(plain(driver.port, { auth: { token: TOKENS[1] } }), { agentId: 'b' });
    await vi.waitFor(async () => expect((await liveSessions(table, Date.now())).map((s) => s.agentId).sort()).toEqual(['a', 'b']), WAIT);
  });

  it('is refused with a wrong token, reports it, keeps trying, and never logs the token', async () => {
    const clock = new ManualClock();
    const { driver, table } = await h.driver();
    const agent = h.agent(plain(driver.port, { auth: { token: 'wrong-token-but-long-enough' } }, { kubernetes: { reconnectTimeoutMs: 1000 } }), { clock });
    await vi.waitFor(() => expect(agent.lastEnd()?.error.code).toBe('unauthenticated'), WAIT);
    expect(agent.lastEnd()?.error.message).toBe('bearer token not accepted');
    await clock.advance(1200);
    await vi.waitFor(() => expect(agent.states.filter((s) => !s.connected)).toHaveLength(2), WAIT);
    expect(await allSessions(table)).toEqual([]);
    expect(agent.logs.text()).toContain('driver stream ended: bearer token not accepted');
    expect(agent.logs.text()).not.toContain('wrong-token-but-long-enough');
  });
});

describe('agent connection: reconnecting', () => {
  it('reconnects after the driver restarts, waiting reconnectTimeoutMs with jitter, and says hello again', async () => {
    const clock = new ManualClock();
    const first = await h.driver();
    const port = first.driver.port;
    const agent = h.agent(plain(port, {}, { kubernetes: { reconnectTimeoutMs: 2000 } }), { clock });
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
    const firstSession = agent.connection.sessionId;
    await first.driver.close(50);
    await vi.waitFor(() => expect(agent.lastEnd()?.error.message).toBe('driver shutting down'), WAIT);
    expect(agent.lastEnd()?.error.code).toBe('unavailable');

    const second = await h.driver({ grpc: { port } }, { table: first.table });
    // random() is 0.5, so the wait is exactly 2000 ms: nothing happens a millisecond before.
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(0), WAIT);
    await clock.advance(1999);
    expect(agent.connectedCount()).toBe(1);
    await clock.advance(1);
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(2), WAIT);
    const [reopened] = await liveSessions(second.table, Date.now());
    expect(reopened?.agentId).toBe('agent-1');
    expect(reopened?.sessionId).not.toBe(firstSession);
    expect(reopened?.sessionId).toBe(agent.connection.sessionId);
  });

  it('keeps trying while nothing listens, forever', async () => {
    const clock = new ManualClock();
    const { driver } = await h.driver();
    const port = driver.port;
    await driver.close(10);
    const agent = h.agent(plain(port, {}, { kubernetes: { reconnectTimeoutMs: 100 } }), { clock });
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) await clock.advance(100);
      await vi.waitFor(() => expect(agent.states).toHaveLength(attempt), WAIT);
      expect(agent.lastEnd()?.error.code).toBe('unavailable');
    }
    await h.driver({ grpc: { port } });
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(0), WAIT);
    await clock.advance(100);
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
  });
});

describe('agent connection: responses', () => {
  it('writes each response as it is made and, without an answer timeout, starts no timer for it', async () => {
    const clock = new ManualClock();
    const { driver, results } = await h.driver();
    const agent = h.agent(plain(driver.port), { clock });
    await vi.waitFor(() => expect(agent.connection.connected).toBe(true), WAIT);
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(0), WAIT);
    const sleeps = vi.spyOn(clock, 'sleep');
    for (let i = 1; i <= 5; i++) {
      await agent.connection.respond({ kind: 'assignmentResult', body: { account: `a${i}`, generation: 1, ok: false, message: 'refused' } });
    }
    expect(results).toHaveLength(5);
    // The stream's watch did not go round its loop for them: no deadline of theirs could be nearer.
    expect(sleeps).not.toHaveBeenCalled();
  });

  it('lets go of a response the driver finished ahead of an earlier one that still waits', async () => {
    // A driver module that finishes one account's cache messages only when told, the others at once:
    // one account's table trouble (docs/protocol.md section 3, `acked_ahead`).
    let release!: () => void;
    const slowDone = new Promise<void>((r) => (release = r));
    const taken: string[] = [];
    const gated: DriverModuleFactory = () => ({
      name: 'gated',
      handlers: {
        resourceEvents: ({ body }) => {
          taken.push(body.account);
          return { done: body.account === 'slow' ? slowDone : Promise.resolve() };
        },
      },
    });
    const { driver } = await h.driver({}, { modules: [gated] });
    const agent = h.agent(plain(driver.port));
    await vi.waitFor(() => expect(agent.connection.connected).toBe(true), WAIT);
    const batch = (account: string): AgentBody => ({ kind: 'resourceEvents', body: { account, cachingEpoch: 1, changes: [], syncs: [], progress: [], health: [], resumeQueryId: 0 } });
    let slowAcked = false;
    const slow = agent.connection.respond(batch('slow')).then(() => (slowAcked = true));
    const quick = [agent.connection.respond(batch('quick-1')), agent.connection.respond(batch('quick-2'))];
    // Acknowledged while the first still waits: with cumulative acknowledgements alone they would wait too.
    await Promise.all(quick);
    expect(taken).toEqual(['slow', 'quick-1', 'quick-2']);
    expect(slowAcked).toBe(false);
    release();
    await slow;
    expect(await agent.connection.flush(1000)).toBe(true);
    expect(agent.connectedCount()).toBe(1);
  });
});

describe('agent connection: assignment', () => {
  it('receives an assignment, answers it through the outbox, and the driver records the answer', async () => {
    const { driver, results } = await h.driver();
    const agent = h.agent(plain(driver.port), {
      onWork: (w) => {
        if (w.kind !== 'assignAccount') return;
        void agent.connection.respond({
          kind: 'assignmentResult',
          body: { account: w.body.account, generation: w.body.generation, ok: false, message: 'cannot reach the cluster: ECONNREFUSED' },
        });
      },
    });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await driver.sessions()[0]?.send({
      kind: 'assignAccount',
      body: { account: 'prod', generation: 2, kubeconfigRef: 'encryptedFile:k/prod', caching: true, cachingEpoch: 4 },
    });
    expect(agent.work[0]).toMatchObject({ kind: 'assignAccount', seq: 1, body: { account: 'prod', caching: true, cachingEpoch: 4 } });
    await vi.waitFor(() =>
      expect(results).toMatchObject([{ agentId: 'agent-1', result: { account: 'prod', ok: false, message: 'cannot reach the cluster: ECONNREFUSED' } }]),
      WAIT,
    );
  });

  it('delivers an answer made while the driver is down once it is back', async () => {
    const clock = new ManualClock();
    const first = await h.driver();
    const port = first.driver.port;
    const agent = h.agent(plain(port, {}, { kubernetes: { reconnectTimeoutMs: 500 } }), { clock });
    await vi.waitFor(() => expect(first.driver.sessions()).toHaveLength(1), WAIT);
    await first.driver.sessions()[0]?.send({ kind: 'assignAccount', body: { account: 'prod', generation: 1 } });
    await first.driver.close(50);
    await vi.waitFor(() => expect(agent.lastEnd()).toBeDefined(), WAIT);
    const delivered = agent.connection.respond({ kind: 'assignmentResult', body: { account: 'prod', generation: 1, ok: true } });
    await h.driver({ grpc: { port } }, { table: first.table, results: first.results });
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(0), WAIT);
    await clock.advance(500);
    await delivered;
    expect(first.results.map((r) => [r.result.account, r.result.ok])).toEqual([['prod', true]]);
  });
});

/** A gRPC server that speaks the agent service badly, for the agent's own defences. */
async function badDriver(behave: (call: ServerDuplexStream<AgentMessage__Output, DriverMessage>) => void): Promise<number> {
  const server = new Server();
  server.addService(agentProtocol().vendor.agent.v1.AgentService.service, { Connect: behave });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  onTestFinished(() => server.forceShutdown());
  return port;
}

describe('agent connection: a driver that misbehaves', () => {
  it('gives up on a driver that does not welcome within timeoutSeconds', async () => {
    const clock = new ManualClock();
    const port = await badDriver(() => undefined);
    const agent = h.agent(plain(port, {}, { timeoutSeconds: 5 }), { clock });
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(0), WAIT);
    await clock.advance(5000);
    await vi.waitFor(() => expect(agent.lastEnd()?.error.message).toBe('no welcome from the driver within 5000 ms'), WAIT);
  });

  it('gives up on a driver that does not acknowledge a response within timeoutSeconds, and sends it again', async () => {
    const clock = new ManualClock();
    const results: number[] = [];
    const port = await badDriver((call) => {
      call.on('data', (m: AgentMessage__Output) => {
        if (m.hello) call.write({ welcome: { sessionId: `s${results.length}`, driverReplicaId: 'r', protocolVersion: 1, heartbeatIntervalMs: 60_000, leaseMs: 120_000 } });
        if (m.assignmentResult) results.push(m.seq);
      });
    });
    const agent = h.agent(plain(port, {}, { timeoutSeconds: 2, kubernetes: { reconnectTimeoutMs: 10 } }), { clock });
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
    void agent.connection.respond({ kind: 'assignmentResult', body: { account: 'prod', generation: 1, ok: true } }).catch(() => undefined);
    await vi.waitFor(() => expect(results).toEqual([1]), WAIT);
    await clock.advance(2000);
    await vi.waitFor(() => expect(agent.lastEnd()?.error.message).toBe('no acknowledgement from the driver within 2000 ms'), WAIT);
    await clock.advance(10);
    await vi.waitFor(() => expect(results).toEqual([1, 1]), WAIT);
  });

  it('leaves a driver that stays silent longer than its lease', async () => {
    const clock = new ManualClock();
    const port = await badDriver((call) => {
      call.once('data', () =>
        call.write({ welcome: { sessionId: 's', driverReplicaId: 'r', protocolVersion: 1, heartbeatIntervalMs: 1000, leaseMs: 3000 } }),
      );
    });
    const agent = h.agent(plain(port), { clock });
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
    await clock.advance(3000);
    await vi.waitFor(() => expect(agent.lastEnd()?.error.message).toBe('nothing from the driver for 3000 ms'), WAIT);
  });

  it('ends the stream when the driver breaks the protocol, and reconnects', async () => {
    const clock = new ManualClock();
    let streams = 0;
    const port = await badDriver((call) => {
      streams++;
      call.once('data', () => call.write({ heartbeatAck: { id: 1 } }));
    });
    const agent = h.agent(plain(port, {}, { kubernetes: { reconnectTimeoutMs: 10 } }), { clock });
    await vi.waitFor(() => expect(agent.lastEnd()?.error.message).toBe('expected welcome as the first message, got heartbeatAck'), WAIT);
    expect(agent.logs.text()).toContain('driver broke the protocol');
    await clock.advance(10);
    await vi.waitFor(() => expect(streams).toBe(2), WAIT);
  });
});

describe('agent connection: heartbeats', () => {
  it('sends heartbeats at the interval the driver asks for, by its own clock', async () => {
    const clock = new ManualClock();
    const heartbeats: number[] = [];
    const port = await badDriver((call) => {
      call.on('data', (m: AgentMessage__Output) => {
        if (m.hello) call.write({ welcome: { sessionId: 's', driverReplicaId: 'r', protocolVersion: 1, heartbeatIntervalMs: 1000, leaseMs: 60_000 } });
        if (m.heartbeat) {
          heartbeats.push(m.heartbeat.id);
          call.write({ heartbeatAck: { id: m.heartbeat.id } });
        }
      });
    });
    const agent = h.agent(plain(port), { clock });
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1), WAIT);
    await clock.advance(999);
    expect(heartbeats).toEqual([]);
    await clock.advance(1);
    await vi.waitFor(() => expect(heartbeats).toEqual([1]), WAIT);
    await clock.advance(1000);
    await vi.waitFor(() => expect(heartbeats).toEqual([1, 2]), WAIT);
  });
});
