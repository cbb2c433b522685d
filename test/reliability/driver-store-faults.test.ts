/**
 * The driver while its table stops answering, answers slowly, or throttles, and after it returns:
 * the driver's table client goes through the fault layer (test/support/store-faults.ts) while the
 * API keeps a healthy one, as when the control plane's containers lose the table and its Lambda does
 * not. Two real agents hold accounts; during each outage an assignment result and an operation
 * result arrive, and an account is activated through the API. Checked:
 *
 * - the driver backs off: its table calls in the second half of the outage stay under a bound
 *   that a loop retrying at its normal pace would pass many times over;
 * - the agents' streams stay up (the same sessions before and after);
 * - nothing acknowledged is lost: the results are written once the table is back;
 * - everything converges without a restart: the account activated during the outage ends ACTIVE
 *   with both agents and exactly one caching, the operation ran once and ended SUCCEEDED.
 */
import { describe, expect, it, vi } from 'vitest';
import { useAccountsWorld, type TestAgent } from '../support/accounts-world.ts';
import { finished, submitOperation } from '../support/operations.ts';
import { faultyTable, type StoreFault } from '../support/store-faults.ts';
import { STORE_BACKOFF_MAX_MS } from '../../driver/backoff.ts';
import { STORE_MAX_ATTEMPTS } from '../../shared/table/core/client.ts';
import { CHANGE_SHARDS } from '../../shared/table/core/keys.ts';

const world = useAccountsWorld();
const WAIT = { timeout: 60_000, interval: 50 };
/** How long each outage is watched once everything that must wait for the table is waiting. */
const WATCH_MS = 4_000;
const HEARTBEAT_MS = 1_000;
/**
 * The most table tries a driver that backs off makes in the window, with 2 agents: each loop (the
 * work feed, the sweep of sessions, the operation queue) and each stream's waiting message at most
 * once per half the longest wait, each lease once per heartbeat; every call up to the client's tries.
 * A read of the work feed is one Query per feed shard (docs/table.md#where-the-writes-land). A loop at
 * its normal pace would pass it alone: the feed is read every 25 ms here.
 */
const MAX_TRIES_IN_WINDOW = STORE_MAX_ATTEMPTS * ((CHANGE_SHARDS + 2 + 2) * (Math.ceil(WATCH_MS / (STORE_BACKOFF_MAX_MS / 2)) + 1) + 2 * (WATCH_MS / HEARTBEAT_MS + 1));

const OUTAGES: { name: string; fault: StoreFault }[] = [
  { name: 'stops answering', fault: { kind: 'hang' } },
  // Slower than the client waits: every write lands, and its answer is lost.
  { name: 'answers too slowly', fault: { kind: 'slow', ms: 1_500 } },
  { name: 'throttles (ProvisionedThroughputExceededException)', fault: { kind: 'error', name: 'ProvisionedThroughputExceededException' } },
  { name: 'throttles (ThrottlingException)', fault: { kind: 'error', name: 'ThrottlingException' } },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function servedBy(name: string, agents: readonly TestAgent[]): Promise<void> {
  await vi.waitFor(async () => {
    const account = await world.account(name);
    expect(account.state).toBe('ACTIVE');
    const entries = account.agents as { agentId: string; caching: boolean }[];
    expect(entries.map((a) => a.agentId).sort()).toEqual(agents.map((a) => a.id).sort());
    expect(entries.filter((a) => a.caching)).toHaveLength(1);
    for (const a of agents) expect(a.holder().view(name)).toBeDefined();
  }, WAIT);
}

describe('the driver while its table fails', () => {
  it.each(OUTAGES)('$name: backs off, keeps the streams, loses nothing acknowledged, and converges when the table returns', { timeout: 120_000 }, async ({ fault }) => {
    await world.fresh(['before', 'answered', 'operated', 'during'].map((name) => ({ name })));
    const { table, faults } = await faultyTable(world.table, { requestTimeoutMs: 1_000 });
    try {
      // Production timing, so the agents' leases in the table outlast the outage.
      const driver = await world.driver({ table, sessions: { heartbeatIntervalMs: HEARTBEAT_MS, leaseMs: 30_000 } });
      const target = `127.0.0.1:${driver.port}`;
      const agents = [await world.agent('k1', { target }), await world.agent('k2', { target })];
      await vi.waitFor(() => expect(driver.sessions()).toHaveLength(2), WAIT);
      for (const name of ['before', 'operated']) {
        await world.activate(name);
        await servedBy(name, agents);
      }
      const streams = driver.sessions().map((s) => s.id).sort();
      const before = await world.record('before');

      // Work that will come back while the table is gone: the cluster holds the checks and the apply.
      world.kube.requests.clear();
      world.kube.faults.latency(2_000, { path: '/version' });
      world.kube.faults.latency(2_000, { verb: 'patch', resource: 'configmaps' });
      await world.activate('answered');
      const op = await submitOperation(world.app, 'operated', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during-outage', namespace: 'default' }, data: { v: '1' } }] });
      expect(op.status).toBe(202);
      await vi.waitFor(() => {
        expect(world.kube.requests.count({ path: '/version' })).toBe(2);
        expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps' })).toBe(1);
      }, WAIT);

      faults.set(fault);
      const start = faults.attempts.length;
      const logsFrom = world.driverLogs.lines.length;
      world.kube.faults.clear();
      // The API still reaches the table: an account activated now waits for the driver.
      await world.activate('during');
      const waiting = () => world.driverLogs.lines.slice(logsFrom).filter((l) => l.msg === 'the table is not answering: the message waits');
      // Each stream handles its messages in order: one waits on each, the rest queue behind it.
      await vi.waitFor(() => expect(new Set(waiting().map((l) => l.agentId))).toEqual(new Set(['k1', 'k2'])), WAIT);
      const settled = faults.attempts.length;
      await sleep(WATCH_MS);
      const late = faults.attempts.length - settled;
      expect(settled - start).toBeGreaterThan(0);
      faults.clear();

      await servedBy('answered', agents);
      await servedBy('during', agents);
      const done = await finished(world.app, op.json.id as string, 60);
      expect(done).toMatchObject({ state: 'SUCCEEDED', attempts: 1 });
      expect(world.kube.requests.count({ verb: 'patch', resource: 'configmaps', name: 'during-outage' })).toBe(1);
      expect(driver.sessions().map((s) => s.id).sort()).toEqual(streams);
      const after = await world.record('before');
      expect(after?.cachingAgentId).toBe(before?.cachingAgentId);
      expect(after?.cachingEpoch).toBe(before?.cachingEpoch);
      expect(late).toBeLessThanOrEqual(MAX_TRIES_IN_WINDOW);
    } finally {
      await world.reset();
      await faults.close();
    }
  });
});
