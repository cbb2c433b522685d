import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld, type AccountsWorld } from '../support/accounts-world.ts';
import { finished, submitOperation, type OperationView } from '../support/operations.ts';

const world = useAccountsWorld();

async function served(w: AccountsWorld, tasks?: Record<string, unknown>) {
  await w.fresh([{ name: 'prod' }]);
  const driver = await w.driver();
  const agent = await w.agent('agent-a', { target: `127.0.0.1:${driver.port}`, ...(tasks === undefined ? {} : { tasks }) });
  await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
  await w.activate('prod');
  await vi.waitFor(async () => expect((await w.account('prod')).agents).toHaveLength(1), WAIT);
  return { driver, agent };
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: name } });
const time = (iso: string | undefined) => Date.parse(iso ?? '');

describe('the agent task budget (tasks.*)', () => {
  it('runs operations one at a time when the budget fits one, and reports how long each waited', async () => {
    // An operation costs 2: a total budget of 3 fits one at a time.
    await served(world, { totalBudget: 3, queueCheckFrequencyMs: 20 });
    world.kube.faults.latency(80, { verb: 'patch', resource: 'configmaps' });
    try {
      const submitted = await Promise.all(['b1', 'b2', 'b3', 'b4'].map((n) => submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap(n)] })));
      const views = await Promise.all(submitted.map((s) => finished(world.app, s.json.id as string)));
      expect(views.every((v) => v.state === 'SUCCEEDED')).toBe(true);
      const byStart = [...views].sort((a, b) => time((a as Run).agentStartedAt) - time((b as Run).agentStartedAt)) as Run[];
      for (let i = 1; i < byStart.length; i++) {
        // Each started after the one before it finished: never two at once.
        expect(time(byStart[i]?.agentStartedAt)).toBeGreaterThanOrEqual(time(byStart[i - 1]?.agentFinishedAt));
      }
      expect(byStart.filter((v) => (v.budgetWaitMs ?? 0) > 0).length).toBeGreaterThanOrEqual(3);
    } finally {
      world.kube.faults.clear();
    }
  });
});

type Run = OperationView & { agentStartedAt?: string; agentFinishedAt?: string; budgetWaitMs?: number };

describe('timeouts', () => {
  it('ends TIMED_OUT when no agent holds the account, saying so', async () => {
    const { agent } = await served(world);
    await agent.stop();
    const submitted = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('never')], timeoutSeconds: 1 });
    const view = await finished(world.app, submitted.json.id as string);
    expect(view).toMatchObject({ state: 'TIMED_OUT', errorCode: 'timeout', attempts: 0, message: 'timed out after 1000 ms: no agent holding account prod took it; a result that arrives later is ignored' });
  });

  it('ends TIMED_OUT when the agent has no result in time, and ignores the result that comes later', async () => {
    const { agent } = await served(world);
    world.kube.faults.latency(2500, { verb: 'patch', resource: 'configmaps', name: 'slow' });
    try {
      const submitted = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('slow')], timeoutSeconds: 1 });
      const id = submitted.json.id as string;
      const view = await finished(world.app, id);
      expect(view).toMatchObject({ state: 'TIMED_OUT', errorCode: 'timeout', attempts: 1, agentId: 'agent-a' });
      expect(view.message).toBe('timed out after 1000 ms: no result from agent agent-a (handed out 1 time); a result that arrives later is ignored');
      await vi.waitFor(() => expect(agent.logs().some((l) => l.msg === 'operation finished: 1 object done' && l.operationId === id)).toBe(true), WAIT);
      await vi.waitFor(() => expect(world.driverLogs.lines.some((l) => l.msg === 'operation result ignored: it already ended TIMED_OUT')).toBe(true), WAIT);
      expect((await finished(world.app, id)).state).toBe('TIMED_OUT');
    } finally {
      world.kube.faults.clear();
    }
  });
});

describe('several driver replicas', () => {
  it('hand each operation out once, whichever replica holds the agent', async () => {
    await world.fresh([{ name: 'prod' }]);
    const first = await world.driver({ replicaId: 'replica-1' });
    const second = await world.driver({ replicaId: 'replica-2' });
    await world.agent('agent-1', { target: `127.0.0.1:${first.port}` });
    await world.agent('agent-2', { target: `127.0.0.1:${second.port}` });
    await vi.waitFor(() => expect(first.sessions().length + second.sessions().length).toBe(2), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toHaveLength(2), WAIT);
    world.kube.requests.clear();
    const names = Array.from({ length: 12 }, (_, i) => `spread-${i}`);
    const submitted = await Promise.all(names.map((n) => submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap(n)] })));
    const views = await Promise.all(submitted.map((s) => finished(world.app, s.json.id as string)));
    expect(views.every((v) => v.state === 'SUCCEEDED' && v.attempts === 1)).toBe(true);
    for (const n of names) expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps', name: n })).toBe(1);
  });
});
