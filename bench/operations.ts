import { runDeployedOperations, wakesModes, wakesSettings } from './deployed-bench.ts';
import { runOperationsBench } from './operations-bench.ts';

// `npm run bench:operations`: prints one JSON line per figure, each beside its raw baseline.
// BENCH_LAYOUT: `deployed` (the default: the layout production runs), `in-process` (`npm start`'s), or both.
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const layouts = (process.env.BENCH_LAYOUT ?? 'deployed').split(',');
for (const layout of layouts) if (layout !== 'deployed' && layout !== 'in-process') throw new Error(`BENCH_LAYOUT: ${JSON.stringify(layout)} is not deployed or in-process`);
// BENCH_RESULT_ASKS=off: with wakes on, the replicas answer no result asks (`wake.results: false`), so
// waiting requests read the table: the same run's comparison for what the asks save.
const resultAsks = process.env.BENCH_RESULT_ASKS !== 'off';
// BENCH_PATH_TRACE=off: the processes write no path trace, and the lines have no `hops_*` nor `agent_cpu_*`.
const pathTrace = process.env.BENCH_PATH_TRACE === 'off' ? ({ pathTrace: 'off' } as const) : {};
if (layouts.includes('deployed')) {
  for (const wakes of wakesModes(process.env.BENCH_WAKES, ['on', 'off'])) {
    await runDeployedOperations(
      { warmup: n('BENCH_WARMUP', 20), rounds: n('BENCH_SINGLE', 200), real: process.env.BENCH_REAL !== '0', wakes, pollIntervalMs: n('BENCH_POLL_MS', 250), ...wakesSettings(wakes, resultAsks), ...(resultAsks ? {} : { resultAsks: 'off' }), ...pathTrace },
      print,
    );
  }
}
if (layouts.includes('in-process')) {
  await runOperationsBench(
    {
      warmup: n('BENCH_WARMUP', 50),
      single: n('BENCH_SINGLE', 200),
      polled: n('BENCH_POLLED', 20),
      fifty: n('BENCH_FIFTY', 20),
      agents: n('BENCH_AGENTS', 10),
      throughputOps: n('BENCH_OPS', 500),
      concurrency: n('BENCH_CONCURRENCY', 40),
    },
    (line) => print({ ...line, layout: 'in-process: API and driver in one process with an in-memory hand-off, as `npm start` runs them' }),
  );
}
process.exit(0);
