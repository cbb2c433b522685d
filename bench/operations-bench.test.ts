import { describe, expect, it } from 'vitest';
import { runOperationsBench } from './operations-bench.ts';

// Runs the benchmark small, to keep it working; only machine-independent figures are asserted.
describe('bench:operations', () => {
  it('prints each figure beside its baseline, with the table calls an operation costs', async () => {
    const lines = await runOperationsBench({ warmup: 2, single: 3, polled: 1, fifty: 1, agents: 2, throughputOps: 6, concurrency: 2 }, () => undefined);
    expect(lines.map((l) => l.figure)).toEqual(['deploy_1_manifest', 'deploy_1_manifest_post_wait', 'deploy_1_manifest_polled', 'deploy_50_manifests', 'throughput_2_agents', 'targets']);
    const single = lines[0] as { ratio_p50: number | null; table_calls_per_op: Record<string, number>; wcu_per_op: number };
    expect(single.ratio_p50).not.toBeNull();
    // The operation (its request inside, handed out at creation), and beside it its queue entry and its
    // entry in the account's operation list (docs/api.md, an account's operations) in one batch; the
    // result; the queue entry's delete. No read: the GET waits for the result's news, and the account
    // that authorizes the POST is kept a second (read again at most once a second).
    expect(single.table_calls_per_op.PutItem).toBe(1);
    expect(single.table_calls_per_op.BatchWriteItem).toBe(1);
    expect(single.table_calls_per_op.UpdateItem).toBe(1);
    expect(single.table_calls_per_op.DeleteItem).toBe(1);
    expect(single.table_calls_per_op.GetItem ?? 0).toBeLessThan(1);
    expect(single.wcu_per_op).toBeGreaterThanOrEqual(5);
    expect((single as unknown as { path_floor: { ratio_p50: number | null } }).path_floor.ratio_p50).not.toBeNull();
    for (const l of lines.slice(0, 4)) expect((l as { ratio_p50: number | null }).ratio_p50).not.toBeNull();
    expect(lines[4]).toMatchObject({ operations: 6, agents: 2 });
  }, 120_000);
});
