import { benchActivateMany, benchIdleStreams, benchPatchToActive, type ManyLayout } from './assign-bench.ts';
import { benchPatchToActiveDeployed, wakesModes, wakesSettings } from './deployed-bench.ts';

// `npm run bench:assign`: prints one JSON line per figure, each beside a baseline from the same run.
const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const only = process.env.BENCH_ONLY;
if (only === undefined || only === 'latency') {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 100);
  // BENCH_LATENCY_LAYOUT: `deployed` (the default: the layout production runs), `in-process`, or both.
  const layouts = (process.env.BENCH_LATENCY_LAYOUT ?? 'deployed').split(',');
  if (layouts.includes('deployed')) {
    for (const wakes of wakesModes(process.env.BENCH_WAKES, ['on', 'off'])) {
      await benchPatchToActiveDeployed({ rounds, wakes, hops: process.env.BENCH_HOPS !== '0', pollIntervalMs: Number(process.env.BENCH_POLL_MS ?? 250), ...wakesSettings(wakes) }, emit);
    }
  }
  if (layouts.includes('in-process')) await benchPatchToActive(rounds, (line) => emit({ ...line, layout: 'in-process: API (app.request), driver and agent in the bench process' }));
}
if (only === undefined || only === 'many') {
  const accounts = Number(process.env.BENCH_ACCOUNTS ?? 1000);
  const zones = Number(process.env.BENCH_ZONES ?? 10);
  // As deployed (table and driver in processes of their own), then everything in this process.
  const layouts = (process.env.BENCH_LAYOUT ?? 'separate,one-process').split(',') as ManyLayout[];
  for (const layout of layouts) await benchActivateMany(accounts, zones, emit, layout);
}
if (only === undefined || only === 'streams') await benchIdleStreams(Number(process.env.BENCH_STREAMS ?? 2000), Number(process.env.BENCH_WINDOW_MS ?? 20_000), emit);
process.exit(0);
