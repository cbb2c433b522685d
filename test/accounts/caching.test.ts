import { describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.ts';
import { RawAgent } from '../raw-agent.ts';
import { AGENT_TOKEN, WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();


describe('the caching role', () => {
  it('moves to another agent of the account when the caching agent stops, with a raised epoch', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    const first = await world.agent('first', { target });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.record('prod'))?.agents['first']?.ok).toBe(true), WAIT);
    const second = await world.agent('second', { target });
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'first', caching: true }, { agentId: 'second', caching: false }]), WAIT);
    expect(await world.record('prod')).toMatchObject({ cachingAgentId: 'first', cachingEpoch: 1 });

    await first.stop();
    await vi.waitFor(async () => expect(await world.record('prod')).toMatchObject({ cachingAgentId: 'second', cachingEpoch: 2 }), WAIT);
    await vi.waitFor(() => expect(second.holder().view('prod')).toMatchObject({ caching: true, cachingEpoch: 2 }), WAIT);
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'second', caching: true }]), WAIT);
    expect((await world.account('prod')).state).toBe('ACTIVE');
  });

  it('moves when the caching agent goes silent and its lease expires', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver({ sessions: { heartbeatIntervalMs: 200, leaseMs: 3_000 } });
    // A hand-driven agent that confirms the assignment, then never says anything again.
    const silent = RawAgent.messages({ port: driver.port, token: AGENT_TOKEN });
    silent.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'silent', zone: 'vendor-agent_infra', agentVersion: '0.1.0' } });
    expect((await silent.next()).body).toBe('welcome');
    await world.activate('prod');
    const assign = await silent.next();
    expect(assign.assignAccount).toMatchObject({ account: 'prod', caching: true, cachingEpoch: 1 });
    silent.send({ seq: 1, ackSeq: Number(assign.seq), assignmentResult: { account: 'prod', generation: assign.assignAccount?.generation ?? 0, ok: true, message: 'held' } });
    const survivor = await world.agent('survivor', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(survivor.holder().view('prod')).toMatchObject({ caching: false, cachingEpoch: 1 }), WAIT);

    // The lease (3 s here) runs out, then the hand-over grace: the survivor takes over.
    expect((await silent.status).details).toMatch(/^lease expired/);
    await vi.waitFor(() => expect(survivor.holder().view('prod')).toMatchObject({ caching: true, cachingEpoch: 2 }), WAIT);
    expect(await world.record('prod')).toMatchObject({ cachingAgentId: 'survivor', cachingEpoch: 2 });
    expect(Object.keys((await world.record('prod'))?.agents ?? {})).toEqual(['survivor']);
    silent.close();
  });

  it('stays with an agent that comes back within the grace, without a new epoch', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver({ assignment: { handoverGraceMs: 60_000 } });
    const target = `127.0.0.1:${driver.port}`;
    const agents = [await world.agent('a1', { target }), await world.agent('a2', { target })];
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(2), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toHaveLength(2), WAIT);
    const before = await world.record('prod');
    const caching = before?.cachingAgentId as string;

    // The caching agent's stream breaks; it reconnects and says what it holds.
    const session = driver.sessions().find((s) => s.agentId === caching);
    session?.end(new Error('network trouble'));
    await vi.waitFor(() => expect(driver.sessions().filter((s) => s.agentId === caching && s !== session)).toHaveLength(1), WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(await world.record('prod')).toMatchObject({ cachingAgentId: caching, cachingEpoch: before?.cachingEpoch, state: 'ACTIVE' });
    const moved = agents.find((a) => a.id === caching);
    expect(moved?.holder().held()).toEqual([{ name: 'prod', generation: before?.generation, caching: true, cachingEpoch: before?.cachingEpoch }]);
    // The agent counted the reconnect and is ready again.
    await vi.waitFor(() => expect(moved?.running.ctx.readiness.evaluate().checks['driver']?.ok).toBe(true), WAIT);
    expect(await moved?.running.ctx.metrics.registry.getSingleMetricAsString('vendor_agent_driver_reconnects_total')).toMatch(/ 1$/m);
    expect(await moved?.running.ctx.metrics.registry.getSingleMetricAsString('vendor_agent_driver_connected')).toMatch(/ 1$/m);
  });
});
