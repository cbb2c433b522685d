import { benchAgentStart } from './agent-start-bench.ts';

// `npm run bench:agent-start`: one JSON line per account count, each beside the bare-process baseline.
const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
await benchAgentStart(
  {
    runs: Number(process.env.BENCH_RUNS ?? 7),
    accountCounts: (process.env.BENCH_ACCOUNTS ?? '0,1,100').split(',').map(Number),
    idleMs: Number(process.env.BENCH_IDLE_MS ?? 3000),
    ...(process.env.BENCH_CPU_PROF === undefined ? {} : { cpuProfDir: process.env.BENCH_CPU_PROF }),
    compileCache: process.env.BENCH_COMPILE_CACHE === '1',
  },
  emit,
);
process.exit(0);
