import { runOperationsBench } from './operations-bench.ts';

// `npm run bench:operations`: prints one JSON line per figure, each beside its raw baseline.
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
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
  (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
);
