import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION, type DriverMessage__Output } from '../../shared/protocol/messages.ts';
import { getSession } from '../../shared/table/agents/sessions.ts';
import { RawAgent } from '../raw-agent.ts';
import { AGENT_TOKEN, AccountsWorld, WAIT } from '../support/accounts-world.ts';
import { submitOperation } from '../support/operations.ts';
import { faultyTable } from '../support/store-faults.ts';

const world = new AccountsWorld();
// The raw agents here send no heartbeats: a lease long enough that a loaded machine never ends their
// streams before the message under test is sent.
const PATIENT = { sessions: { heartbeatIntervalMs: 200, leaseMs: 60_000 } };
const raws: RawAgent[] = [];
beforeAll(() => world.start());
afterAll(() => world.close());
afterEach(async () => {
  for (const r of raws.splice(0)) r.close();
  await world.reset();
});


function raw(port: number, agentId: string, zone = 'vendor-agent_infra', previousSessionId = ''): RawAgent {
  const a = RawAgent.messages({ port, token: AGENT_TOKEN });
  raws.push(a);
  // The test world's lease is 1 s: a busy machine can take longer between two steps of a test.
  a.keepAlive(200);
  a.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId, zone, agentVersion: '0.1.0', previousSessionId } });
  return a;
}

async function next(a: RawAgent, body: string): Promise<DriverMessage__Output> {
  for (;;) {
    const m = await a.next();
    if (m.body === body) return m;
  }
}

describe('bad answers from an agent', () => {
  it('a result for a generation never handed out is refused by name; other streams and the table stay as they were', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver(PATIENT);
    const good = await world.agent('good', { target: `127.0.0.1:${driver.port}` });
    const bad = raw(driver.port, 'bad');
    await next(bad, 'welcome');
    await world.activate('prod');
    const assign = await next(bad, 'assignAccount');
    const generation = Number(assign.assignAccount?.generation);
    await vi.waitFor(() => expect(good.holder().view('prod')).toBeDefined(), WAIT);
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents['good']?.ok).toBe(true), WAIT);
    const before = await world.record('prod');

    bad.send({ seq: 1, ackSeq: Number(assign.seq), assignmentResult: { account: 'prod', generation: generation + 5, ok: true, message: 'lies' } });
    const s = await bad.status;
    expect(s.code, s.details).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toBe(`assignment result for generation ${generation + 5} of account prod, which was never assigned (latest: ${generation})`);
    expect(s.metadata.get('vendor-protocol-problem')).toEqual(['unknown_account']);
    expect(s.metadata.get('vendor-protocol-seq')).toEqual(['1']);
    const after = await world.record('prod');
    expect(after?.agents['good']).toEqual(before?.agents['good']);
    expect(after?.lastAssignmentMsg).toBe(before?.lastAssignmentMsg);
    expect(driver.sessions().map((x) => x.agentId)).toEqual(['good']);
  });

  it('a result for an account given to other agents only is refused; a stale one is acknowledged and changes nothing', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver(PATIENT);
    const holder = raw(driver.port, 'holder');
    await next(holder, 'welcome');
    const outsider = raw(driver.port, 'outsider', 'other-zone');
    await next(outsider, 'welcome');
    await world.activate('prod', 'vendor-agent_infra');
    const first = await next(holder, 'assignAccount');
    const g = Number(first.assignAccount?.generation);
    holder.send({ seq: 1, ackSeq: Number(first.seq), assignmentResult: { account: 'prod', generation: g, ok: true, message: 'fine' } });
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents['holder']?.ok).toBe(true), WAIT);
    // Re-POST with another kubeconfig raises the generation; the holder answers the old one once more.
    await world.call('POST', '/vendor/accounts', [{ name: 'prod', kubeconfigFile: world.kubeconfig('prod-2') }]);
    const second = await next(holder, 'assignAccount');
    expect(Number(second.assignAccount?.generation)).toBe(g + 1);
    holder.send({ seq: 2, ackSeq: Number(second.seq), assignmentResult: { account: 'prod', generation: g, ok: false, message: 'late answer' } });
    expect((await next(holder, 'ack')).ackSeq).toBe(2);
    expect((await world.record('prod'))?.lastAssignmentMsg).toBe('fine');

    // At the account's generation (an older one would be stale whoever sent it, and change nothing).
    outsider.send({ seq: 1, assignmentResult: { account: 'prod', generation: g + 1, ok: true, message: 'me too' } });
    const s = await outsider.status;
    expect(s.details).toBe('assignment result for account prod, which was not assigned to this agent');
    expect((await world.record('prod'))?.agents['outsider']).toBeUndefined();
  });
});

describe('what an agent says it holds', () => {
  it('an account claimed in hello but never given: no operation of it goes there, the agent is told to drop it, and a real holder gets the work', async () => {
    await world.fresh([{ name: 'prod' }]);
    // Settling accounts reads them in batches (BatchGetItem); slowed down, the claim would be all the
    // driver knows for a while: long enough for the operation's hand-out to pick a holder by it.
    const { table, faults } = await faultyTable(world.table);
    try {
      const driver = await world.driver({ table, operations: { redispatchAfterMs: 0 } });
      const first = raw(driver.port, 'first');
      await next(first, 'welcome');
      await world.activate('prod', 'vendor-agent_infra');
      const assign = await next(first, 'assignAccount');
      first.send({ seq: 1, ackSeq: Number(assign.seq), assignmentResult: { account: 'prod', generation: Number(assign.assignAccount?.generation), ok: true, message: 'ok' } });
      await vi.waitFor(async () => expect((await world.record('prod'))?.agents['first']?.ok).toBe(true), WAIT);
      const reply = await submitOperation(world.app, 'prod', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }], replicas: 2 });
      expect(reply.status).toBe(202);
      expect((await next(first, 'operation')).operation?.operationId).toBe(reply.json.id);
      first.close();

      faults.set({ kind: 'slow', ms: 1_500 }, { only: ['BatchGetItem'] });
      // Another zone's agent says it holds `prod`, at the generation the first one had.
      const claimer = RawAgent.messages({ port: driver.port, token: AGENT_TOKEN });
      raws.push(claimer);
      claimer.send({
        hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'claimer', zone: 'other-zone', agentVersion: '0', heldAccounts: [{ name: 'prod', generation: Number(assign.assignAccount?.generation), caching: true, cachingEpoch: 1 }] },
      });
      claimer.keepAlive(200);
      const seen: string[] = [];
      for (;;) {
        const m = await claimer.next();
        seen.push(m.body ?? '');
        if (m.body === 'removeAccount') break;
      }
      claimer.send({ heartbeat: { id: 1 } });
      for (;;) {
        const m = await claimer.next();
        seen.push(m.body ?? '');
        if (m.body === 'heartbeatAck' && m.heartbeatAck?.id === 1) break;
      }
      expect(seen).not.toContain('operation');
      faults.clear();

      const holder = raw(driver.port, 'holder');
      const given = await next(holder, 'assignAccount');
      holder.send({ seq: 1, ackSeq: Number(given.seq), assignmentResult: { account: 'prod', generation: Number(given.assignAccount?.generation), ok: true, message: 'ok' } });
      expect((await next(holder, 'operation')).operation).toMatchObject({ operationId: reply.json.id, attempt: 2 });
      claimer.send({ heartbeat: { id: 2 } });
      for (;;) {
        const m = await claimer.next();
        expect(m.body).not.toBe('operation');
        if (m.body === 'heartbeatAck' && m.heartbeatAck?.id === 2) break;
      }
      expect((await world.record('prod'))?.agents['claimer']).toBeUndefined();
    } finally {
      await world.reset();
      await faults.close();
    }
  });
});

describe('answers that come back late', () => {
  it('an answer for an assignment whose removal the agent confirmed since is acknowledged and changes nothing', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver(PATIENT);
    const a = raw(driver.port, 'slow');
    await next(a, 'welcome');
    await world.activate('prod');
    const assign = await next(a, 'assignAccount');
    // The account goes before the agent answers; the agent confirms the removal first.
    expect((await world.call('DELETE', '/vendor/accounts/prod')).status).toBe(200);
    const removal = await next(a, 'removeAccount');
    a.send({ ackSeq: Number(removal.seq), ack: {} });
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents).toEqual({}), WAIT);
    const before = await world.record('prod');
    a.send({ seq: 1, ackSeq: Number(removal.seq), assignmentResult: { account: 'prod', generation: Number(assign.assignAccount?.generation), ok: true, message: 'late' } });
    expect((await next(a, 'ack')).ackSeq).toBe(1);
    expect(await world.record('prod')).toEqual(before);
  });
});

describe('resuming on another replica', () => {
  it('tells an agent that reconnects elsewhere how far its previous stream was processed', async () => {
    await world.fresh([{ name: 'prod' }]);
    const one = await world.driver({ ...PATIENT, replicaId: 'one' });
    const two = await world.driver({ ...PATIENT, replicaId: 'two' });
    const a = raw(one.port, 'mover');
    const welcome = await next(a, 'welcome');
    await world.activate('prod');
    const assign = await next(a, 'assignAccount');
    a.send({ seq: 1, ackSeq: Number(assign.seq), assignmentResult: { account: 'prod', generation: Number(assign.assignAccount?.generation), ok: true, message: 'ok' } });
    expect((await next(a, 'ack')).ackSeq).toBe(1);
    a.close();
    await vi.waitFor(async () => expect((await getSession(world.table, 'vendor-agent_infra', 'mover'))?.endedAt).toBeDefined(), WAIT);

    const b = raw(two.port, 'mover', 'vendor-agent_infra', welcome.welcome?.sessionId ?? '');
    const again = await next(b, 'welcome');
    expect(again.welcome).toMatchObject({ driverReplicaId: 'two', resume: { known: true, lastProcessedSeq: 1 } });
  });
});
