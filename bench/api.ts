import { runApiBench } from './api-bench.ts';

// `npm run bench:api`: 10,000 accounts; prints one JSON line per figure, each beside its raw baseline.
const accounts = Number(process.env.BENCH_ACCOUNTS ?? 10_000);
const figures = await runApiBench(
  { accounts, reads: Number(process.env.BENCH_READS ?? 300), batches: Math.min(Number(process.env.BENCH_BATCHES ?? 30), Math.floor(accounts / 200)) },
  (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
);

const byName = new Map(figures.map((f) => [f.figure, f]));
const getById = byName.get('get_by_id');
const page1 = byName.get('list_page_1_limit_100');
const deep = figures.find((f) => /^list_page_(?!1_)/.test(f.figure));
process.stdout.write(
  `${JSON.stringify({
    bench: 'api',
    figure: 'targets',
    get_by_id_p50_within_1_5x_of_getitem: getById?.ratio_p50 !== null && (getById?.ratio_p50 ?? Infinity) <= 1.5,
    deep_page_rcu_at_most_2x_page_1: (deep?.rcu_per_req ?? Infinity) <= 2 * (page1?.rcu_per_req ?? 0),
    deep_page_rcu_over_page_1: page1 && deep ? Math.round((deep.rcu_per_req / page1.rcu_per_req) * 1000) / 1000 : null,
    ...filteredTargets(),
  })}\n`,
);

/** Each filtered list's deepest page against its first, and the summary against reading every account. */
function filteredTargets(): Record<string, unknown> {
  const targets: Record<string, unknown> = {};
  for (const f of figures) {
    const m = /^(list_(?:state|source)_.*)_page_1_limit_100$/.exec(f.figure);
    const deepest = m && figures.find((g) => g.figure.startsWith(`${m[1]}_page_`) && g.figure !== f.figure);
    if (m && deepest) targets[`${m[1]}_deep_page_rcu_over_page_1`] = Math.round((deepest.rcu_per_req / f.rcu_per_req) * 1000) / 1000;
  }
  targets.filtered_deep_pages_rcu_at_most_2x_page_1 = Object.values(targets).every((r) => (r as number) <= 2);
  const summary = byName.get('account_summary');
  targets.summary_rcu_below_reading_every_account = summary !== undefined && summary.rcu_per_req < summary.baseline.rcu_per_req;
  return targets;
}
