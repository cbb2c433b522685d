/**
 * `npm run soak -- --minutes N [--seed S] [--drivers 3] [--agents 2] [--accounts 12] [--fault-rate 0.05] [--wakes on|off]`: the
 * process-fault scenario (test/reliability/scenario/) for N minutes under steady load, then settled
 * and checked. Prints JSON lines:
 *
 * - `{"type":"start"}`: the settings, the seed and the load average;
 * - `{"type":"sample"}` every minute (and at the start and the end of the run): each process's RSS
 *   (MiB) and incarnation, the V8 heap in use of the harness and of the table (after a full collection),
 *   the table's memory outside the V8 heap (its in-memory store's values) and its open store iterators,
 *   the harness's event-loop delay, the lags of the minute (a PATCH until the
 *   account is ACTIVE with an agent, an operation from submission to its end), error lines so far,
 *   faults injected so far;
 * - `{"type":"problem"}` for each thing that did not converge or was lost;
 * - `{"type":"summary"}`: memory at the start, middle and end per process, lags over the run, error
 *   counts, faults injected and whether they were survived, what the table holds at the end by entity,
 *   and `lost` (must be 0).
 *
 * Processes named in the scenario's immortal list are never killed, so their memory over the whole
 * run shows a leak as growth; the others are killed and started again at random.
 * Exits 1 when anything was lost.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { percentile, round } from '../bench/stats.ts';
import { loadAverage, procStats } from '../bench/support.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { TTL_ATTRIBUTE } from '../shared/table/core/schema.ts';
import { Scenario } from '../test/reliability/scenario/scenario.ts';
import { tableSnapshot } from '../test/support/snapshot.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    seed: { type: 'string' },
    drivers: { type: 'string', default: '3' },
    agents: { type: 'string', default: '2' },
    accounts: { type: 'string', default: '12' },
    'fault-rate': { type: 'string', default: '0.05' },
    /** `off`: the API wakes no driver replica, which then finds work by polling alone (docs/protocol.md#6b-wakes). */
    wakes: { type: 'string', default: 'on' },
  },
});

function positive(name: string, raw: string | undefined): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    process.stderr.write(`--${name} must be a positive number, got ${String(raw)}\n`);
    process.exit(2);
  }
  return n;
}

const minutes = positive('minutes', values.minutes);
const drivers = Math.round(positive('drivers', values.drivers));
const agentsPerZone = Math.round(positive('agents', values.agents));
const accounts = Math.round(positive('accounts', values.accounts));
const faultRate = Math.min(1, positive('fault-rate', values['fault-rate']));
const seed = values.seed === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(values.seed);
const SAMPLE_MS = 60_000;

const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const mib = (bytes: number) => round(bytes / 1_048_576, 1);

const zones = ['east_agents', 'west_agents'].map((zone) => ({ zone, agents: agentsPerZone }));
// One driver and the first agent of each zone live through the whole run: their memory shows a leak.
const immortal = ['driver-1', 'agent-east-1', 'agent-west-1'];
// The table in a process of its own: the harness's memory is then the API's, the cluster's and its own.
const scenario = new Scenario({ seed, drivers, zones, accounts, immortal, faultRate, table: 'process', wakes: values.wakes !== 'off', onEvent: (e) => (e.event === 'problem' ? print({ type: 'problem', ...e }) : undefined) });
const LOOP_RESOLUTION_MS = 20;
const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
/** The histogram holds whole intervals of its timer: the delay is what exceeds the resolution. */
const loopDelay = (ns: number) => round(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS));

interface Sample {
  elapsedMin: number;
  rssMiB: Record<string, number>;
  /** The harness's V8 heap in use: beside its RSS, it tells objects kept from memory merely not returned. */
  harnessHeapMiB: number;
  /** The table process's V8 heap in use after a full collection: what the embedded table keeps alive. */
  tableHeapMiB: number | null;
}
const samples: Sample[] = [];
let lagSeen = { activation: 0, operation: 0 };

function lagFigures(values: readonly number[]): { n: number; p50_ms: number; p95_ms: number; max_ms: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50_ms: percentile(sorted, 50), p95_ms: percentile(sorted, 95), max_ms: sorted.at(-1) ?? 0 };
}

async function sample(started: number): Promise<void> {
  const { world, lag, counts } = scenario;
  const rssMiB: Record<string, number> = {};
  const incarnations: Record<string, number> = {};
  for (const [name, pid] of Object.entries(world.pids())) {
    try {
      rssMiB[name] = mib(procStats(pid).rssBytes);
    } catch {
      // Gone between listing and reading: killed by the scenario.
    }
    const proc = world.drivers.get(name) ?? world.agents.get(name);
    if (proc !== undefined) incarnations[name] = proc.incarnation;
  }
  const elapsedMin = round((Date.now() - started) / 60_000, 2);
  const harnessHeapMiB = mib(process.memoryUsage().heapUsed);
  const table = await world.store.memory?.();
  const tableHeapMiB = table?.heapUsedMiB ?? null;
  samples.push({ elapsedMin, rssMiB, harnessHeapMiB, tableHeapMiB });
  print({
    type: 'sample',
    elapsedMin,
    rssMiB,
    harnessHeapMiB,
    tableHeapMiB,
    tableExternalMiB: table?.externalMiB ?? null,
    tableOpenIterators: table?.openIterators ?? null,
    incarnations,
    harnessEventLoopDelay: { p50_ms: loopDelay(loop.percentile(50)), p99_ms: loopDelay(loop.percentile(99)), max_ms: loopDelay(loop.max) },
    lag: { activation: lagFigures(lag.activation.slice(lagSeen.activation)), operation: lagFigures(lag.operation.slice(lagSeen.operation)) },
    errorLines: Object.fromEntries(world.errors),
    faults: { driverKills: counts.driverKills, agentKills: counts.agentKills, watchDrops: counts.watchDrops, clusterChanges: counts.clusterChanges },
    steps: counts.steps,
    operations: counts.operations,
  });
  lagSeen = { activation: lag.activation.length, operation: lag.operation.length };
  loop.reset();
}

/**
 * What the table holds at the end, by entity (the partition key before any `#`): items, their size as
 * JSON, and how many carry an expiry time already past. DynamoDB deletes expired items by itself; the
 * embedded table keeps them, so they explain part of its memory.
 */
async function tableCensus(table: TableRef): Promise<Record<string, { items: number; kib: number; expired: number }>> {
  const census: Record<string, { items: number; kib: number; expired: number }> = {};
  const nowSeconds = Date.now() / 1000;
  for (const [key, json] of (await tableSnapshot(table)).items) {
    const entity = (key.split('|')[0] as string).split('#')[0] as string;
    const entry = (census[entity] ??= { items: 0, kib: 0, expired: 0 });
    entry.items++;
    entry.kib += json.length / 1024;
    const expires = (JSON.parse(json) as Record<string, unknown>)[TTL_ATTRIBUTE];
    if (typeof expires === 'number' && expires < nowSeconds) entry.expired++;
  }
  for (const entry of Object.values(census)) entry.kib = round(entry.kib, 1);
  return census;
}

let exitCode = 1;
try {
  print({ type: 'start', minutes, seed, drivers, zones, accounts, immortal, faultRate, wakes: values.wakes !== 'off', loadAverage: loadAverage(), node: process.version });
  await scenario.start();
  loop.enable();
  const started = Date.now();
  await sample(started);
  const run = scenario.runFor(minutes * 60_000);
  const timer = setInterval(() => void sample(started), SAMPLE_MS);
  await run;
  clearInterval(timer);
  await sample(started);
  const problems = await scenario.settle(120_000);
  for (const p of problems) if (!scenario.problems.includes(p)) print({ type: 'problem', problem: p });
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.rssMiB)))].sort();
  const at = (s: Sample | undefined, name: string) => s?.rssMiB[name] ?? null;
  const first = samples[0];
  const middle = samples[Math.floor(samples.length / 2)];
  const last = samples.at(-1);
  const { counts, world, lag } = scenario;
  print({
    type: 'summary',
    minutes,
    seed,
    loadAverageEnd: loadAverage(),
    memoryMiB: Object.fromEntries(names.map((n) => [n, { start: at(first, n), middle: at(middle, n), end: at(last, n), restarts: Math.max(0, ((world.drivers.get(n) ?? world.agents.get(n))?.incarnation ?? 1) - 1) }])),
    harnessHeapMiB: { start: first?.harnessHeapMiB ?? null, middle: middle?.harnessHeapMiB ?? null, end: last?.harnessHeapMiB ?? null },
    tableHeapMiB: { start: first?.tableHeapMiB ?? null, middle: middle?.tableHeapMiB ?? null, end: last?.tableHeapMiB ?? null },
    lag: { activation: lagFigures(lag.activation), operation: lagFigures(lag.operation) },
    errorLines: Object.fromEntries(world.errors),
    errorSamples: world.errorSamples.slice(0, 5),
    faults: {
      injected: { driverKills: counts.driverKills, agentKills: counts.agentKills, watchDrops: counts.watchDrops, clusterChanges: counts.clusterChanges },
      survived: problems.length === 0,
    },
    work: { steps: counts.steps, registrations: counts.registrations, activations: counts.activations, activationRefusals: counts.activationRefusals, deletions: counts.deletions, operations: counts.operations, operationRefusals: counts.operationRefusals },
    scannedForSecrets: world.scanned,
    tableAtEnd: await tableCensus(world.table),
    lost: problems.length,
  });
  exitCode = problems.length === 0 ? 0 : 1;
} catch (err) {
  print({ type: 'error', message: err instanceof Error ? err.message : String(err) });
} finally {
  loop.disable();
  await scenario.close();
}
process.exit(exitCode);
