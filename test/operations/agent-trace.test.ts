import { existsSync, readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { OPERATION_TRACE_ENV, TRACE_POINTS, type OperationTraceRecord } from '../../agent/operations/trace.ts';
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

const records = (file: string): OperationTraceRecord[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as OperationTraceRecord) : [];

describe("the agent's part of an operation's path and its trace (docs/operations.md#the-agents-part-of-the-path)", () => {
  it('records each operation once, every point from its arrival to its result on the stream, in path order; its count comes after', async () => {
    const file = join(world.dir, 'trace.jsonl');
    const agent = await served(world, { [OPERATION_TRACE_ENV]: file });
    const counter = agent.running.ctx.metrics.operations;
    const inc = counter.inc.bind(counter);
    const countedAt: number[] = [];
    counter.inc = ((...args: Parameters<typeof inc>) => {
      countedAt.push(performance.timeOrigin + performance.now());
      return inc(...args);
    }) as typeof inc;

    const ids: string[] = [];
    for (const name of ['t1', 't2', 't3']) {
      const done = await run(world.app, 'prod', { action: 'deploy', manifests: [configMap(name)] });
      expect(done.state).toBe('SUCCEEDED');
      ids.push(done.id);
    }
    await vi.waitFor(() => expect(records(file)).toHaveLength(3), WAIT);
    const traced = records(file);
    expect(traced.map((r) => r.operationId)).toEqual(ids);
    for (const [i, r] of traced.entries()) {
      expect(r.agentId).toBe('agent-t');
      const stamps = TRACE_POINTS.map((p) => r.at[p]);
      expect(stamps.every((t) => typeof t === 'number')).toBe(true);
      expect([...(stamps as number[])].sort((a, b) => a - b)).toEqual(stamps);
      // The API server's part is the apply's round trip; the rest is the agent's own.
      expect(r.steps.cluster).toBeGreaterThan(0);
      expect(r.steps.own).toBeCloseTo((r.at.resultWritten as number) - (r.at.received as number) - (r.steps.cluster as number), 0);
      // The process's CPU over the agent's part, and since the previous result.
      expect(r.cpu.path).toBeGreaterThan(0);
      if (i > 0) expect(r.cpu.sincePrevious).toBeGreaterThanOrEqual(r.cpu.path as number);
      // Counted only once the result was on the stream (its stamp is rounded to 0.1 ms).
      expect(countedAt[i]).toBeGreaterThanOrEqual((r.at.resultWritten as number) - 0.05);
    }
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

  it('is off without the variable: no trace on the agent, nothing stamped', async () => {
    const agent = await served(world);
    expect(agent.running.ctx.operationTrace).toBeUndefined();
    const done = await run(world.app, 'prod', { action: 'deploy', manifests: [configMap('untraced')] });
    expect(done.state).toBe('SUCCEEDED');
  });
});
