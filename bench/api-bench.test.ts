import { describe, expect, it } from 'vitest';
import { ACCOUNT_SHARDS } from '../shared/table/core/keys.ts';
import { runApiBench } from './api-bench.ts';

// Runs the benchmark small, to keep it working; only machine-independent figures are asserted.
describe('bench:api', () => {
  it('prints each figure beside its baseline, with capacity that does not grow with page depth', async () => {
    const lines: Record<string, unknown>[] = [];
    const figures = await runApiBench({ accounts: 250, reads: 3, batches: 1 }, (l) => lines.push(l));
    expect(figures.map((f) => f.figure)).toEqual([
      'get_by_id',
      'get_by_id_new_token_each_time',
      'list_page_1_limit_100',
      'list_page_3_limit_100',
      'post_100_records',
      'patch_100_records',
      'list_state_ACTIVE_page_1_limit_100',
      'list_state_ACTIVE_page_2_limit_100',
      'list_state_ACTIVE_zoneId_source_driver_page_1_limit_100',
      'list_state_ACTIVE_zoneId_source_driver_page_2_limit_100',
      'list_source_driver_page_1_limit_100',
      'list_source_driver_page_3_limit_100',
      'list_name_prefix_page_1_limit_100',
      'list_name_prefix_page_3_limit_100',
      'account_summary',
      'list_agents_limit_100',
      'list_page_1_limit_100_caller_without_roles',
      'list_page_3_limit_100_caller_without_roles',
    ]);
    const by = new Map(figures.map((f) => [f.figure, f]));
    expect(by.get('get_by_id')).toMatchObject({ rcu_per_req: 0.5, round_trips_per_req: 1, ratio_rcu: 1 });
    const page1 = by.get('list_page_1_limit_100')!;
    const deep = by.get('list_page_3_limit_100')!;
    expect(deep.rcu_per_req).toBeLessThanOrEqual(2 * page1.rcu_per_req);
    // The rank directory, the chunk holding the page, and one Query per shard of the account items.
    expect(deep.round_trips_per_req).toBe(2 + ACCOUNT_SHARDS);
    // 100 conditional updates, then the facet index follows the batch: its directory, the one chunk
    // holding the 100 names, the chunk's write and its count, and the consistent read back of the batch.
    const post = by.get('post_100_records')!;
    expect(post.round_trips_per_req).toBe(106);
    expect(post.wcu_per_req).toBeGreaterThan(100);
    expect(post.wcu_per_req).toBeLessThanOrEqual(100 + 13);
    const total = lines.find((l) => l.figure === 'total_cost')!;
    expect(total.rcu_total_from_rank_directory as number).toBeLessThan(total.rcu_counting_every_item as number);
    for (const f of figures) expect(f.ratio_p50).not.toBeNull();
    // A name prefix pages from the rank index: a deep page costs what the first costs.
    const prefix1 = by.get('list_name_prefix_page_1_limit_100')!;
    expect(by.get('list_name_prefix_page_3_limit_100')!.rcu_per_req).toBeLessThanOrEqual(2 * prefix1.rcu_per_req);
    expect(prefix1.rcu_per_req).toBeLessThan(total.rcu_counting_every_item as number);
    // Filters by state, zone and source page the facet index: a deep page costs what the first costs,
    // and neither, nor the summary, reads every account.
    for (const [first, deepest] of [
      ['list_state_ACTIVE_page_1_limit_100', 'list_state_ACTIVE_page_2_limit_100'],
      ['list_state_ACTIVE_zoneId_source_driver_page_1_limit_100', 'list_state_ACTIVE_zoneId_source_driver_page_2_limit_100'],
      ['list_source_driver_page_1_limit_100', 'list_source_driver_page_3_limit_100'],
    ]) {
      expect(by.get(deepest as string)!.rcu_per_req).toBeLessThanOrEqual(2 * by.get(first as string)!.rcu_per_req);
      expect(by.get(first as string)!.rcu_per_req).toBeLessThan(total.rcu_counting_every_item as number);
    }
    const filteredTotal = lines.find((l) => l.figure === 'filtered_total_cost')!;
    expect(filteredTotal.rcu_total_from_facet_directory as number).toBeLessThan(filteredTotal.rcu_counting_every_item as number);
    expect(by.get('account_summary')!.rcu_per_req).toBeLessThan(total.rcu_counting_every_item as number);
    // The restricted caller's pages cost what their raw reads cost, far below reading every account.
    for (const f of figures.filter((x) => x.figure.endsWith('_caller_without_roles'))) {
      expect(f.ratio_rcu).toBe(1);
      expect(f.rcu_per_req).toBeLessThan(total.rcu_counting_every_item as number);
    }
  }, 180_000);
});
