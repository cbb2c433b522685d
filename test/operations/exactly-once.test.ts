import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { ManualClock } from '../support/manual-clock.ts';
import { AGENT_TOKEN, WAIT, useAccountsWorld, type AccountsWorld } from '../support/accounts-world.ts';
import { finished, getOperation, run, submitOperation } from '../support/operations.ts';

// The API server's clock moves only when a test says: a request held by injected latency is
// answered exactly when the test advances it, whoever sent it and whenever.
const kubeClock = new ManualClock(1_700_000_000_000);
const world = useAccountsWorld({ deploymentController: true, clock: kubeClock });

/** Lets every held request of the API server go. */
async function release(ms = 1500): Promise<void> {
  await kubeClock.advance(ms);
}
const AGENT_MAIN = fileURLToPath(new URL('../../agent/main.ts', import.meta.url));

async function served(w: AccountsWorld, agentId = 'agent-a') {
  await w.fresh([{ name: 'prod' }]);
  const driver = await w.driver();
  const agent = await w.agent(agentId, { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
  await w.activate('prod');
  await vi.waitFor(async () => expect((await w.account('prod')).agents).toHaveLength(1), WAIT);
  return { driver, agent };
}

const configMap = (name: string, value = '1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { value } });

describe('idempotency under retried requests', () => {
  it('the same key and request, retried one after another and concurrently, is one operation applied once', async () => {
    await served(world);
    world.kube.requests.clear();
    const body = { action: 'deploy', manifests: [configMap('once')] };
    const first = await submitOperation(world.app, 'prod', body, 'deploy-once-1');
    const retries = await Promise.all(Array.from({ length: 6 }, () => submitOperation(world.app, 'prod', body, 'deploy-once-1')));
    expect(first.status).toBe(202);
    expect(retries.every((r) => r.status === 202 && r.json.id === first.json.id && r.headers.get('idempotent-replayed') === 'true')).toBe(true);
    const done = await finished(world.app, first.json.id as string);
    expect(done).toMatchObject({ state: 'SUCCEEDED', attempts: 1 });
    // Retried after it finished: still the same operation, nothing applied again.
    const late = await submitOperation(world.app, 'prod', body, 'deploy-once-1');
    expect(late.json).toMatchObject({ id: first.json.id, state: 'SUCCEEDED' });
    expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps', name: 'once' })).toBe(1);

    // Concurrent first attempts with one key.
    const racing = await Promise.all(Array.from({ length: 8 }, () => submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('racing')] }, 'deploy-racing')));
    expect(new Set(racing.map((r) => r.json.id)).size).toBe(1);
    expect(racing.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    await finished(world.app, racing[0]?.json.id as string);
    expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps', name: 'racing' })).toBe(1);

    // The same key with another request is refused and changes nothing.
    const other = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('once', '2')] }, 'deploy-once-1');
    expect(other.status).toBe(409);
    expect(world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'once' })?.data).toEqual({ value: '1' });
  });
});

/** An agent in a process of its own, so it can be killed without a word to anyone. */
function agentProcess(w: AccountsWorld, id: string, target: string) {
  const path = join(w.dir, `${id}.yml`);
  writeFileSync(
    path,
    stringify({
      driver: { grpc: target, insecure: true, auth: { token: AGENT_TOKEN } },
      kubernetes: { reconnectTimeoutMs: 50, retries: { enabled: false }, assignedAccounts: { kubeconfigDirs: [w.dir] }, accounts: [] },
      server: { host: '127.0.0.1', port: 0 },
      logging: { format: 'json', level: 'debug', file: join(w.dir, `${id}.log`) },
    }),
  );
  const child = spawn(process.execPath, [AGENT_MAIN, '--config', path], {
    env: { ...process.env, VENDOR_AGENT_ID: id, VENDOR_DEPLOYMENT_NAME: 'vendor-agent', POD_NAMESPACE: 'infra' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    /** Freezes it: no heartbeat, no result, its sockets kept open. */
    freeze: () => child.kill('SIGSTOP'),
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('an agent killed mid-operation', () => {
  const webRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' };
  const deploymentOf = () => world.kube.store.get(webRef);

  /** A driver, an agent in its own process holding `prod`, and a deployment `web`. */
  async function doomedWorld(agentId: string) {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const doomed = agentProcess(world, agentId, `127.0.0.1:${driver.port}`);
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual([agentId]), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId, caching: true }]), WAIT);
    return { driver, doomed };
  }

  it('in flight when the agent died: the request never took effect, and another agent applies it once', async () => {
    const { driver, doomed } = await doomedWorld('agent-doomed');
    try {
      world.kube.requests.clear();
      world.kube.faults.latency(1500, { verb: 'patch', resource: 'configmaps', name: 'in-flight' });
      const submitted = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('in-flight')] });
      await vi.waitFor(() => expect(world.kube.requests.count({ verb: 'patch', name: 'in-flight' })).toBe(1), WAIT);
      await doomed.kill();
      await world.agent('agent-rescuer', { target: `127.0.0.1:${driver.port}` });
      await vi.waitFor(() => expect(world.kube.requests.count({ verb: 'patch', name: 'in-flight' })).toBe(2), WAIT);
      const rvBefore = world.kube.store.resourceVersion;
      await release();
      const view = await finished(world.app, submitted.json.id as string);
      expect(view).toMatchObject({ state: 'SUCCEEDED', agentId: 'agent-rescuer', attempts: 2, outcomes: [{ result: 'created', code: 201 }] });
      // One write: the dead agent's request, its connection gone, was never applied.
      expect(world.kube.store.resourceVersion).toBe(rvBefore + 1);
    } finally {
      world.kube.faults.clear();
      await doomed.kill();
    }
  });

  it('after it applied a restart and before it reported: another agent finds the change made and leaves it (one generation)', async () => {
    const { driver, doomed } = await doomedWorld('agent-doomed-2');
    try {
      const deployed = await run(world.app, 'prod', {
        action: 'deploy',
        manifests: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } } }],
      });
      expect(deployed.state).toBe('SUCCEEDED');
      await world.kube.settled();
      const before = deploymentOf()?.metadata.generation ?? 0;
      world.kube.requests.clear();
      world.kube.faults.latency(1500, { verb: 'patch', resource: 'deployments', name: 'web' });
      const submitted = await submitOperation(world.app, 'prod', { action: 'rolloutRestart', targets: [webRef] });
      const id = submitted.json.id as string;
      await vi.waitFor(() => expect(world.kube.requests.count({ verb: 'patch', name: 'web' })).toBe(1), WAIT);
      // The agent stops dead; the API server then applies its restart. It never reports.
      doomed.freeze();
      await release();
      await vi.waitFor(() => expect(deploymentOf()?.metadata.generation).toBe(before + 1), WAIT);
      await world.agent('agent-rescuer-2', { target: `127.0.0.1:${driver.port}` });
      const view = await finished(world.app, id);
      expect(view).toMatchObject({ state: 'SUCCEEDED', agentId: 'agent-rescuer-2', attempts: 2 });
      expect(view.outcomes[0]).toMatchObject({ result: 'unchanged', message: 'already changed by an earlier attempt of this operation' });
      // The second agent only read the object.
      expect(world.kube.requests.count({ verb: 'patch', name: 'web' })).toBe(1);
      await world.kube.settled();
      const live = deploymentOf();
      expect(live?.metadata.generation).toBe(before + 1);
      expect(live?.metadata.annotations?.['vendor-agent.io/operations']?.split(',')).toEqual([id]);
    } finally {
      world.kube.faults.clear();
      await doomed.kill();
    }
  });

  it('after it applied a deploy and before it reported: another agent applies it again, which writes nothing', async () => {
    const { driver, doomed } = await doomedWorld('agent-doomed-3');
    try {
      world.kube.requests.clear();
      world.kube.faults.latency(1500, { verb: 'patch', resource: 'configmaps', name: 'applied' });
      const submitted = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [configMap('applied')] });
      await vi.waitFor(() => expect(world.kube.requests.count({ verb: 'patch', name: 'applied' })).toBe(1), WAIT);
      doomed.freeze();
      const rvBefore = world.kube.store.resourceVersion;
      await release();
      await vi.waitFor(() => expect(world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'applied' })).toBeDefined(), WAIT);
      world.kube.faults.clear();
      await world.agent('agent-rescuer-3', { target: `127.0.0.1:${driver.port}` });
      const view = await finished(world.app, submitted.json.id as string);
      const cm = world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'applied' });
      expect(view).toMatchObject({ state: 'SUCCEEDED', agentId: 'agent-rescuer-3', attempts: 2 });
      expect(view.outcomes[0]).toMatchObject({ result: 'configured', code: 200, resourceVersion: cm?.metadata.resourceVersion });
      expect(world.kube.requests.count({ verb: 'patch', name: 'applied' })).toBe(2);
      expect(world.kube.store.resourceVersion).toBe(rvBefore + 1);
    } finally {
      world.kube.faults.clear();
      await doomed.kill();
    }
  });
});
