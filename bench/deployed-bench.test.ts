import { describe, expect, it } from 'vitest';
import { PATH_MARKS } from './operations-hops.ts';
import { benchPatchToActiveDeployed, pathRoundTrips, runDeployedOperations, wakesModes, wakesSettings } from './deployed-bench.ts';

// Runs the deployed-layout figures small, to keep them working; only what does not depend on the machine is asserted.
describe('deployed layout figures', () => {
  it('measures an operation through the Lambda API and two driver replicas, each process of the layout accounted for, beside the raw apply', async () => {
    const lines = await runDeployedOperations({ warmup: 1, rounds: 2, real: false, wakes: 'absent', pollIntervalMs: 100 }, () => undefined);
    expect(lines).toHaveLength(1);
    const [line] = lines as [Record<string, unknown>];
    expect(line).toMatchObject({ figure: 'deploy_1_manifest_deployed', target: 'test-api-server', n: 2, wakes: 'absent', baseline: { n: 2 }, warm_operations: 1 });
    expect(line.ratio_p50).toBeGreaterThan(0);
    // The floor is the apply plus the path's serial table round trips measured in the same run: above the apply alone.
    const roundTrip = line.table_round_trip as { n: number; p50_ms: number };
    const floor = line.floor as { p50_ms: number; ratio_p50: number };
    expect(roundTrip.n).toBe(2);
    expect(roundTrip.p50_ms).toBeGreaterThan(0);
    expect(floor.p50_ms).toBeGreaterThan((line.baseline as { p50_ms: number }).p50_ms);
    expect(floor.ratio_p50).toBeGreaterThan(1);
    // The API, both replicas, the table and the agent are processes of their own.
    expect(Object.keys(line.cpu_ms as Record<string, number>).sort()).toEqual(['agent_1', 'api', 'driver_1', 'driver_2', 'table', 'test_api_server']);
  }, 180_000);

  it('breaks an operation down per hop from the path trace of the API, both replicas, the agent and the bench, every hop passed by every operation', async () => {
    // A reservation's answer is waited for as long as a loaded machine takes: given up, the operation goes the queued way.
    const wakes = wakesSettings('on');
    const lines = await runDeployedOperations({ warmup: 1, rounds: 5, real: false, wakes: 'on', pollIntervalMs: 250, ...wakes, env: { ...wakes.env, VENDOR_WAKE_RESERVE_WAIT_MS: '10000' } }, () => undefined);
    const line = lines[0] as Record<string, unknown>;
    expect(line.hops_n).toBe(5);
    // Every operation is stored handed out to the agent a replica reserved: no wake, no claim.
    const queuedOnly = new Set(['api.wake_sent', 'replica.wake_received', 'replica.claim_sent', 'replica.claim_answered']);
    const path = PATH_MARKS.filter((m) => !queuedOnly.has(m));
    expect(Object.keys(line.hops_p50_ms as Record<string, number>)).toEqual(path.slice(1).map((to, i) => `${path[i]}→${to}`));
    expect(line.hops_partial).toBeUndefined();
    // One clock for every process: no hop runs backwards.
    expect(Object.entries(line.hops_p50_ms as Record<string, number>).filter(([, ms]) => ms < 0)).toEqual([]);
    expect(Object.keys(line.hops_side_p50_ms as Record<string, number>).sort()).toEqual(['ask_sent_to_replica', 'store_sent_to_ask_sent']);
    // The agent's CPU of every operation: over its part of the path, and since its previous result.
    expect(Object.keys(line.agent_cpu_p50_ms as Record<string, number>).sort()).toEqual(['cpu_path', 'cpu_per_operation']);
    expect((line.agent_cpu_p50_ms as Record<string, number>).cpu_path).toBeGreaterThan(0);
  }, 180_000);

  it('measures PATCH to ACTIVE through the Lambda API until a replica recorded the real agent\'s confirmation', async () => {
    const line = await benchPatchToActiveDeployed({ rounds: 2, wakes: 'absent', pollIntervalMs: 100 }, () => undefined);
    expect(line).toMatchObject({ figure: 'patch_to_active_deployed', n: 2, target_p50_ms: 40, target_p99_ms: 100, poll_bound_p99_ms: 200 });
    expect((line.baseline as { p50_ms: number }).p50_ms).toBeGreaterThan(0);
  }, 180_000);

  it('breaks PATCH to ACTIVE down per hop from the debug records of the replicas and the agent, every hop found for every activation', async () => {
    const line = await benchPatchToActiveDeployed({ rounds: 2, wakes: 'on', pollIntervalMs: 250, ...wakesSettings('on') }, () => undefined);
    const hops = line.hops as Record<string, { n: number }>;
    expect(Object.keys(hops)).toEqual(['api_to_wake', 'wake_to_feed_read', 'feed_read_to_handout_written', 'handout_written_to_sent', 'sent_to_agent', 'agent_client', 'agent_check', 'answer_to_replica', 'answer_written', 'answer_to_log']);
    // The feed may be polled before the wake comes; every other mark is there for both activations.
    for (const [hop, { n }] of Object.entries(hops)) if (hop !== 'api_to_wake' && hop !== 'wake_to_feed_read') expect({ hop, n }).toEqual({ hop, n: 2 });
    expect(Object.keys(line.cpu_ms_per_activation as Record<string, number>)).toContain('table');
  }, 180_000);

  it('counts the serial table round trips of the path per mode: the reservation saves the claim, the named wake the queue read, the answer the API\'s read', () => {
    expect([pathRoundTrips('on', true), pathRoundTrips('on', false), pathRoundTrips('off', true), pathRoundTrips('absent', true)]).toEqual([2, 4, 5, 5]);
  });

  it('refuses a wakes mode it does not know', () => {
    expect(wakesModes('on,off', ['absent'])).toEqual(['on', 'off']);
    expect(wakesModes(undefined, ['absent'])).toEqual(['absent']);
    expect(() => wakesModes('on,sometimes', ['absent'])).toThrow(/"sometimes" is not on, off or absent/);
  });
});
