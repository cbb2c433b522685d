import { describe, expect, it } from 'vitest';
import { benchActivateMany, benchIdleStreams, benchPatchToActive } from './assign-bench.ts';

// Runs the benchmark small, to keep it working; only what does not depend on the machine is asserted.
describe('bench:assign', () => {
  it('prints each figure beside its baseline', async () => {
    const lines: Record<string, unknown>[] = [];
    const emit = (l: Record<string, unknown>) => void lines.push(l);
    await benchPatchToActive(3, emit);
    await benchActivateMany(40, 2, emit);
    await benchIdleStreams(5, 300, emit);
    expect(lines.map((l) => l.figure)).toEqual(['patch_to_active', 'activate_1000', 'idle_streams']);
    const [latency, many, streams] = lines;
    expect(latency).toMatchObject({ n: 3, pickup_bound_ms: 250, target_p99_ms: 350 });
    expect(latency?.baseline_cluster_check_p50_ms).toBeGreaterThan(0);
    expect(many).toMatchObject({ accounts: 40, patch_requests: 1, baseline_raw_updates: 120 });
    expect(streams).toMatchObject({ streams: 5, connected: 5 });
    expect(streams?.driver_rss_mib).toBeGreaterThan(0);
  }, 120_000);
});
