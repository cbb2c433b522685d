import { benchDensity } from './density-bench.ts';

// `npm run bench:density`: one agent with BENCH_ACCOUNTS clusters beside client-node informers; one JSON line per figure.
const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const pprof = process.env.BENCH_PPROF_PORT;
// The driver runs in this process: on a machine loaded enough that the table drops connections, a
// failed table call nobody waits for is counted (`unhandled_rejections`), and the run goes on instead of ending.
let unhandled = 0;
const report = (e: unknown) => {
  unhandled++;
  process.stderr.write(`failure nobody waited for in the bench process: ${e instanceof Error ? e.message : String(e)}\n`);
};
process.on('unhandledRejection', report);
process.on('uncaughtException', report);
await benchDensity(
  {
    accounts: Number(process.env.BENCH_ACCOUNTS ?? 100),
    hosts: Number(process.env.BENCH_HOSTS ?? 4),
    objects: Number(process.env.BENCH_OBJECTS ?? 500),
    namespaces: Number(process.env.BENCH_NAMESPACES ?? 5),
    settleMs: Number(process.env.BENCH_SETTLE_MS ?? 30_000),
    churnPerSecond: Number(process.env.BENCH_CHURN_PER_SECOND ?? 100),
    churnSeconds: Number(process.env.BENCH_CHURN_SECONDS ?? 180),
    ...(pprof === undefined ? {} : { pprofPort: Number(pprof) }),
    trace: process.env.BENCH_TRACE === '1',
    ...(process.env.BENCH_AGENT_CPU_PROF === undefined ? {} : { agentCpuProfileDir: process.env.BENCH_AGENT_CPU_PROF }),
    ...(process.env.BENCH_TRACE_LOG === undefined ? {} : { traceLogFile: process.env.BENCH_TRACE_LOG }),
  },
  emit,
);
emit({ bench: 'density', figure: 'unhandled_rejections', value: unhandled });
process.exit(0);
