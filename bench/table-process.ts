/**
 * The embedded table (dynalite) in a process of its own, as DynamoDB is a service of its own: the
 * control plane's figures then do not include the table's CPU. Prints one JSON line with the
 * endpoint and table name once the table is ready; SIGTERM stops it. On SIGUSR2 it collects garbage
 * (when started with --expose-gc) and prints one JSON line with its memory: what the table keeps alive
 * (V8 heap in use after a full collection) apart from what the process holds (RSS), and the store
 * iterators open at that moment (docs/table.md#memory-of-the-embedded-table).
 */
import { systemClock } from '../shared/clock.ts';
import { openDynaliteIterators } from '../shared/table/core/dynalite-store.ts';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';

/**
 * `BENCH_TABLE_DELAY_MS`: each request waits that long before the table takes it up, standing in for
 * a table a network hop away (docs/benchmarks.md#operations-npm-run-benchoperations); 0 by default.
 */
function requestDelayMs(raw: string | undefined): number {
  const ms = Number(raw ?? 0);
  if (!Number.isFinite(ms) || ms < 0 || ms > 1000) throw new Error(`BENCH_TABLE_DELAY_MS must be a number of milliseconds from 0 to 1000, not "${raw}"`);
  return ms;
}

// Other processes reach it: over loopback TCP. It owns the table, so it sweeps expired items as DynamoDB would.
const table = await startEmbeddedTable({ tcp: true, ttlSweep: { clock: systemClock }, requestDelayMs: requestDelayMs(process.env.BENCH_TABLE_DELAY_MS) });
process.stdout.write(`${JSON.stringify({ endpoint: table.endpoint, tableName: table.tableName })}\n`);
const stop = (): void => void table.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const mib = (n: number) => Math.round((n / 1_048_576) * 10) / 10;
  process.stdout.write(`${JSON.stringify({ memory: { rssMiB: mib(rss), heapUsedMiB: mib(heapUsed), externalMiB: mib(external + arrayBuffers), openIterators: openDynaliteIterators() } })}\n`);
});
process.on('SIGINT', stop);
