import { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { AGENT_CPU_FIGURES, AGENT_PATH_MARKS, AgentPathTrace } from '../../agent/operations/trace.ts';
import { readPathTraces, type TracedMark } from '../../bench/operations-hops.ts';
import { PATH_TRACE_ENV, traceNow } from '../../shared/operations/path-trace.ts';
import { WAIT, useAccountsWorld, type AccountsWorld } from '../support/accounts-world.ts';
import { run } from '../support/operations.ts';

const world = useAccountsWorld();

async function served(w: AccountsWorld, env?: Record<string, string>) {
  await w.fresh([{ name: 'prod' }]);
  const driver = await w.driver();
  const agent = await w.agent('agent-t', { target: `127.0.0.1:${driver.port}`, ...(env === undefined ? {} : { env }) });
  await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
  await w.activate('prod');
  await vi.waitFor(async () => expect((await w.account('prod')).agents).toHaveLength(1), WAIT);
  return agent;
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: name } });

/** Each operation's marks and figures, by name, each name with every value it was written with. */
function byOperation(marks: readonly TracedMark[]): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  for (const m of marks) {
    let of = out.get(m.id);
    if (of === undefined) out.set(m.id, (of = new Map()));
    of.set(m.mark, [...(of.get(m.mark) ?? []), m.at]);
  }
  return out;
}

const only = (of: Map<string, number[]> | undefined, name: string) => {
  const values = of?.get(name);
  expect({ name, written: values?.length }).toEqual({ name, written: 1 });
  return (values as number[])[0] as number;
};

describe("the agent's part of an operation's path on the path trace (docs/operations.md#the-agents-part-of-the-path)", () => {
  it("marks each operation's path once, every point from its arrival to its result on the stream, in path order, with its CPU; its count comes after", async () => {
    const dir = join(world.dir, 'path-trace');
    const agent = await served(world, { [PATH_TRACE_ENV]: dir });
    const counter = agent.running.ctx.metrics.operations;
    const inc = counter.inc.bind(counter);
    const countedAt: number[] = [];
    counter.inc = ((...args: Parameters<typeof inc>) => {
      countedAt.push(traceNow());
      return inc(...args);
    }) as typeof inc;

    const ids: string[] = [];
    for (const name of ['t1', 't2', 't3']) {
      const done = await run(world.app, 'prod', { action: 'deploy', manifests: [configMap(name)] });
      expect(done.state).toBe('SUCCEEDED');
      ids.push(done.id);
    }
    // Each process writes its marks out every 100 ms.
    await vi.waitFor(() => expect(ids.every((id) => readPathTraces(dir).some((m) => m.id === id && m.mark === AGENT_CPU_FIGURES.cpu_path))).toBe(true), WAIT);
    const traced = byOperation(readPathTraces(dir).filter((m) => m.mark.startsWith('agent.')));
    expect([...traced.keys()].sort()).toEqual([...ids].sort());
    for (const [i, id] of ids.entries()) {
      const of = traced.get(id);
      const stamps = AGENT_PATH_MARKS.map((mark) => only(of, mark));
      expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
      // The API server's part is the apply's round trip.
      expect(only(of, 'agent.patch_answered')).toBeGreaterThan(only(of, 'agent.patch_sent'));
      // The process's CPU over the agent's part, and since the previous result.
      const cpuPath = only(of, AGENT_CPU_FIGURES.cpu_path);
      expect(cpuPath).toBeGreaterThan(0);
      if (i > 0) expect(only(of, AGENT_CPU_FIGURES.cpu_per_operation)).toBeGreaterThanOrEqual(cpuPath);
      // Counted only once the result was on the stream (its mark is written at 1 µs).
      expect(countedAt[i]).toBeGreaterThanOrEqual(only(of, 'agent.result_written') - 0.0005);
    }
  });

  it('writes one path per operation: a hand-out again while it runs, its result sent again after it finished, write nothing more', () => {
    const written: TracedMark[] = [];
    const trace = new AgentPathTrace((mark, id, at) => written.push({ at: at ?? traceNow(), mark, id }));
    let t = 0;
    const at = () => ++t;
    trace.mark('op-1', 'received', at());
    trace.mark('op-1', 'taken', at());
    trace.mark('op-1', 'received', at());
    trace.mark('op-1', 'started', at());
    const requests = trace.requests('op-1');
    // Two manifests: the first request's write and the last answer stand.
    requests.written();
    requests.answered();
    requests.written();
    requests.answered();
    trace.mark('op-1', 'finished', at());
    trace.mark('op-1', 'resultWritten', at());
    // Handed out again after it finished here: only its result is sent again.
    trace.mark('op-1', 'received', at());
    trace.mark('op-1', 'resultWritten', at());
    trace.mark('op-1', 'taken', at());

    const marks = written.filter((m) => !m.mark.startsWith('agent.cpu_'));
    expect(marks.map((m) => m.mark)).toEqual([...AGENT_PATH_MARKS]);
    expect(marks.every((m) => m.id === 'op-1')).toBe(true);
    expect(marks.find((m) => m.mark === 'agent.received')?.at).toBe(1);
    const times = Object.fromEntries(marks.map((m) => [m.mark, m.at]));
    expect((times['agent.patch_answered'] as number) - (times['agent.patch_sent'] as number)).toBeGreaterThan(0);
    expect(written.filter((m) => m.mark === AGENT_CPU_FIGURES.cpu_path)).toHaveLength(1);
  });

  it('runs operation after operation over the connection it has: no TLS handshake per operation', async () => {
    await served(world);
    await run(world.app, 'prod', { action: 'deploy', manifests: [configMap('first')] });
    const connections = vi.spyOn(HttpsAgent.prototype, 'createConnection');
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5']) expect((await run(world.app, 'prod', { action: 'deploy', manifests: [configMap(name)] })).state).toBe('SUCCEEDED');
    // The cache's watches open connections of their own as they start (their pool has no socket
    // limit); the applies, over the bounded pool of lists and writes, open none.
    const forRequests = connections.mock.contexts.filter((agent) => (agent as HttpsAgent).maxSockets !== Infinity);
    expect(forRequests).toHaveLength(0);
    expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps' })).toBeGreaterThanOrEqual(5);
    connections.mockRestore();
  });

  it('is off without the variable: no trace on the agent, nothing marked', async () => {
    const agent = await served(world);
    expect(agent.running.ctx.pathTrace).toBeUndefined();
    const done = await run(world.app, 'prod', { action: 'deploy', manifests: [configMap('untraced')] });
    expect(done.state).toBe('SUCCEEDED');
  });
});
