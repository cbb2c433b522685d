import { describe, expect, it } from 'vitest';
import { benchPatchToActiveDeployed, runDeployedOperations, wakesModes } from './deployed-bench.ts';

// Runs the deployed-layout figures small, to keep them working; only what does not depend on the machine is asserted.
describe('deployed layout figures', () => {
  it('measures an operation through the Lambda API and two driver replicas, each process of the layout accounted for, beside the raw apply', async () => {
    const lines = await runDeployedOperations({ warmup: 1, rounds: 2, real: false, wakes: 'absent', pollIntervalMs: 100 }, () => undefined);
    expect(lines).toHaveLength(1);
    const [line] = lines as [Record<string, unknown>];
    expect(line).toMatchObject({ figure: 'deploy_1_manifest_deployed', target: 'test-api-server', n: 2, wakes: 'absent', baseline: { n: 2 } });
    expect(line.ratio_p50).toBeGreaterThan(0);
    // The API, both replicas, the table and the agent are processes of their own.
    expect(Object.keys(line.cpu_ms as Record<string, number>).sort()).toEqual(['agent_1', 'api', 'driver_1', 'driver_2', 'table', 'test_api_server']);
  }, 180_000);

  it('measures PATCH to ACTIVE through the Lambda API until a replica recorded the real agent\'s confirmation', async () => {
    const line = await benchPatchToActiveDeployed({ rounds: 2, wakes: 'absent', pollIntervalMs: 100 }, () => undefined);
    expect(line).toMatchObject({ figure: 'patch_to_active_deployed', n: 2, target_p50_ms: 40, target_p99_ms: 100, poll_bound_p99_ms: 200 });
    expect((line.baseline as { p50_ms: number }).p50_ms).toBeGreaterThan(0);
  }, 180_000);

  it('refuses a wakes mode it does not know', () => {
    expect(wakesModes('on,off', ['absent'])).toEqual(['on', 'off']);
    expect(wakesModes(undefined, ['absent'])).toEqual(['absent']);
    expect(() => wakesModes('on,sometimes', ['absent'])).toThrow(/"sometimes" is not on, off or absent/);
  });
});
