/**
 * `npm run bench:sources`: a driver replica's start-up sync of its config file's accounts
 * (`syncDefinitionSources`, as driver/main.ts runs it) into the table in a process of its own
 * (bench/table-process.ts), at each size of BENCH_SIZES (default 1000,10000), each on a fresh table.
 *
 * Figures, one JSON line each:
 * - `new`: every definition new (the first replica's start on an empty table);
 * - `unchanged`: the same file again (every later replica's start, and every restart);
 * - `changed_and_removed`: the file with one definition in a hundred changed and one in a hundred gone;
 * - `floor`: the account items alone, written by plain BatchWriteItems of 25 (no condition, no index,
 *   no membership), with the sync's concurrency: what no sync of those definitions can go below.
 * Each gives the elapsed time, table round trips per definition by operation, capacity units per
 * definition, and CPU time of this process and of the table's.
 */
import type { AccountSettings } from '../shared/accounts/settings.ts';
import { CapacityMeter } from '../shared/table/core/capacity.ts';
import { BATCH_WRITE_LIMIT, batchWrite } from '../shared/table/core/batch.ts';
import { runBounded } from '../shared/table/core/bounded.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { newAccountRecord } from '../shared/table/accounts/records.ts';
import { syncDefinitionSources, type DefinitionSource } from '../shared/table/sources/definition-sources.ts';
import { SYNC_CONCURRENCY } from '../shared/table/sources/sync.ts';
import { round } from './stats.ts';
import { loadAverage, ownCpuMs, startBenchTable, type BenchTable, type Line } from './support.ts';

const sizes = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);

function fileAccounts(n: number, changedEvery = 0, removedEvery = 0): AccountSettings[] {
  return Array.from({ length: n }, (_, i) => i)
    .filter((i) => removedEvery === 0 || i % removedEvery !== removedEvery - 1)
    .map((i) => ({ name: `fleet-${String(i).padStart(5, '0')}`, kubeconfigFile: changedEvery !== 0 && i % changedEvery === 0 ? '/k/changed' : '/k/fleet' }));
}

function fileSource(accounts: readonly AccountSettings[]): DefinitionSource {
  return { id: 'driver-config', kind: 'driver-config', load: async () => accounts };
}

interface Measured {
  elapsed_ms: number;
  round_trips_per_def: number;
  by_operation_per_def: Record<string, number>;
  rcu_per_def: number;
  wcu_per_def: number;
  bench_cpu_ms: number;
  table_cpu_ms: number | null;
}

async function measure(table: BenchTable, meter: CapacityMeter, definitions: number, work: () => Promise<unknown>): Promise<Measured> {
  const before = meter.snapshot();
  const ops = new Map(meter.operations);
  const cpu = ownCpuMs();
  const tableCpu = table.cpuMs();
  const start = performance.now();
  await work();
  const elapsed = performance.now() - start;
  const spent = meter.since(before);
  const byOperation: Record<string, number> = {};
  for (const [op, n] of meter.operations) {
    const d = n - (ops.get(op) ?? 0);
    if (d > 0) byOperation[op] = round(d / definitions, 4);
  }
  const tableAfter = table.cpuMs();
  return {
    elapsed_ms: round(elapsed, 1),
    round_trips_per_def: round(spent.roundTrips / definitions, 4),
    by_operation_per_def: byOperation,
    rcu_per_def: round(spent.readUnits / definitions, 3),
    wcu_per_def: round(spent.writeUnits / definitions, 3),
    bench_cpu_ms: round(ownCpuMs() - cpu, 0),
    table_cpu_ms: tableCpu === undefined || tableAfter === undefined ? null : tableAfter - tableCpu,
  };
}

/** The account items a sync of `accounts` creates, as plain BatchWriteItems of 25 into a partition of their own. */
async function writeFloor(t: TableRef, accounts: readonly AccountSettings[], now: number): Promise<void> {
  const items = accounts.map(({ name, ...settings }) =>
    ({ pk: 'BENCHFLOOR', sk: name, ...newAccountRecord(name, now), defs: { 'driver-config': { kind: 'driver-config', settings, at: now } } }),
  );
  const batches: (() => Promise<void>)[] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_LIMIT) {
    const batch = items.slice(i, i + BATCH_WRITE_LIMIT);
    batches.push(async () => {
      await batchWrite(t, { RequestItems: { [t.tableName]: batch.map((Item) => ({ PutRequest: { Item } })) } });
    });
  }
  await runBounded(batches, SYNC_CONCURRENCY);
}

async function runSize(n: number): Promise<void> {
  const table = await startBenchTable('process');
  try {
    const meter = new CapacityMeter();
    const t = table.client(meter);
    const line = (figure: string, definitions: number, m: Measured, extra: Line = {}) =>
      process.stdout.write(`${JSON.stringify({ bench: 'sources', figure, definitions, ...m, ...extra, load_average_1m: loadAverage() })}\n`);
    const file = fileAccounts(n);
    const synced = await measure(table, meter, n, () => syncDefinitionSources(t, [fileSource(file)], 1));
    line('new', n, synced);
    line('unchanged', n, await measure(table, meter, n, () => syncDefinitionSources(t, [fileSource(file)], 2)));
    const edited = fileAccounts(n, 100, 100);
    line('changed_and_removed', n, await measure(table, meter, n, () => syncDefinitionSources(t, [fileSource(edited)], 3)), {
      changed: edited.filter((a) => a.kubeconfigFile === '/k/changed').length,
      removed: n - edited.length,
    });
    const floor = await measure(table, meter, n, () => writeFloor(t, file, 4));
    line('floor', n, floor, { what: `${Math.ceil(n / BATCH_WRITE_LIMIT)} BatchWriteItems of the same account items`, ratio_elapsed_new: round(synced.elapsed_ms / floor.elapsed_ms, 2) });
  } finally {
    await table.close();
  }
}

for (const n of sizes) await runSize(n);
