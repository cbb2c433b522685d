/**
 * The figures of `bench:operations` and `bench:assign` in the layout production runs
 * (bench/deployed-plane.ts: the Lambda API, two driver replicas, the table and every agent in
 * processes of their own), each beside the raw operation it stands for, measured in the same run.
 *
 * - `deploy_1_manifest_deployed` (one line per API server, `target` `test-api-server` and
 *   `kube-apiserver`): `POST ?wait` of a deploy of one Deployment through the Lambda API, answered
 *   once SUCCEEDED (the result read back; one request, as the contract allows, instead of POST and
 *   `GET ?wait`), alternating with the raw server-side apply of the same manifest to the same API
 *   server with the agent's own cluster client, with where the time went (`steps_*`) and CPU per
 *   operation of each process. Targets against the real kube-apiserver: p50 ≤ 3× and p99 ≤ 6× the
 *   raw apply.
 * - `patch_to_active_deployed`: PATCH of one account to ACTIVE through the Lambda API until a replica
 *   has recorded the agent's confirmation (the agent checks the cluster, GET /version, before it
 *   confirms). Targets: p50 ≤ 40 ms, p99 ≤ 100 ms. Baseline: the agent's cluster check alone.
 *
 * `wakes` says how the replicas learn of work the API stored: `on` (the API's push hand-offs),
 * `off` (turned off on purpose: the replicas find it at their next read of the table) or `absent`
 * (a build without them: the same as `off`).
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { performance } from 'node:perf_hooks';
import { alternate, deployment, rawApply } from './operations-bench.ts';
import { activateAll, apiRequest, startDeployedPlane, type DeployedPlane, type KubeTarget } from './deployed-plane.ts';
import { percentile, ratio, round } from './stats.ts';
import { hopBreakdown, hopRecord, hopRecordsOfFile, type Activation, type HopRecord } from './activation-hops.ts';
import { loadAverage, type Line } from './support.ts';
import { traceNow } from '../shared/operations/path-trace.ts';
import { pathHops, readPathTraces, type PathHops, type TracedMark, type TracedOperation } from './operations-hops.ts';

export type WakesMode = 'on' | 'off' | 'absent';

export interface DeployedOptions {
  warmup: number;
  rounds: number;
  /** Include the real kube-apiserver (when test/cluster/provision.sh has built it). */
  real: boolean;
  wakes: WakesMode;
  /** The replicas' `operations.pollIntervalMs` and `assignment.pollIntervalMs`. */
  pollIntervalMs: number;
  /** Extra keys of the replicas' vendor-driver.yml for this wakes mode. */
  driverConfig?: Record<string, unknown>;
  /** Extra environment of the replicas and the API for this wakes mode. */
  env?: Record<string, string>;
  /** `off`: the replicas answer no result asks (`wake.results: false`); shown on the line. */
  resultAsks?: 'off';
  /** `off`: no path trace, so no `hops_*` nor `agent_cpu_*` on the line (on by default). */
  pathTrace?: 'off';
}

/** The plane's settings shared by every figure. */
function planeOptions(options: Pick<DeployedOptions, 'pollIntervalMs' | 'driverConfig' | 'env'>) {
  return { replicas: 2, pollIntervalMs: options.pollIntervalMs, ...(options.driverConfig === undefined ? {} : { driverConfig: options.driverConfig }), ...(options.env === undefined ? {} : { env: options.env }) };
}

export const LAYOUT = 'deployed: API as the Lambda function (functions/lambda.ts behind an HTTP-to-Lambda adapter), 2 driver replicas (driver/main.ts), table (dynalite), agents and API servers, each in a process of its own';
const TARGET_NAMES: Record<KubeTarget, string> = { test: 'test-api-server', real: 'kube-apiserver' };

/**
 * How the path spends its time, from the operation's own timestamps (every process on one machine,
 * one clock): the API storing it (request sent → `createdAt`), the hand-out (→ `dispatchedAt`), on
 * its way to the agent (→ the agent's `agentStartedAt`), the agent's apply (→ `agentFinishedAt`), the
 * result stored (→ `finishedAt`) and the answer (→ the response received).
 */
export const STEPS = ['store', 'hand_out', 'to_agent', 'apply', 'result', 'answer'] as const;
export type Steps = Record<(typeof STEPS)[number], number[]>;

function recordSteps(steps: Steps, sent: number, received: number, view: Record<string, unknown>): void {
  const at = (k: string) => Date.parse(String(view[k]));
  const marks = [sent, at('createdAt'), at('dispatchedAt'), at('agentStartedAt'), at('agentFinishedAt'), at('finishedAt'), received];
  if (marks.some((m) => Number.isNaN(m))) return;
  STEPS.forEach((step, i) => steps[step].push((marks[i + 1] as number) - (marks[i] as number)));
}

function stepPercentiles(steps: Steps, p: number): Record<string, number> {
  return Object.fromEntries(STEPS.map((s) => [s, round(percentile([...steps[s]].sort((a, b) => a - b), p))]));
}

/**
 * `POST ?wait` of a deploy (one request: stored, then answered once finished, the result read back);
 * throws unless it succeeded. `steps` collects where its time went.
 */
/** The bench's own marks of the path trace and the operations they belong to (bench/operations-hops.ts). */
interface BenchTrace {
  marks: TracedMark[];
  operations: TracedOperation[];
}

async function operate(plane: DeployedPlane, account: string, manifest: Record<string, unknown>, steps?: Steps, trace?: BenchTrace): Promise<void> {
  const key = randomUUID();
  const sent = Date.now();
  trace?.marks.push({ at: traceNow(), mark: 'bench.sent', id: key });
  const done = await apiRequest(plane, 'POST', `/vendor/accounts/${account}/operations?wait=60`, { action: 'deploy', manifests: [manifest] }, { 'Idempotency-Key': key });
  trace?.marks.push({ at: traceNow(), mark: 'bench.received', id: key });
  const received = Date.now();
  if (done.status !== 200 || done.json.state !== 'SUCCEEDED') throw new Error(`POST ?wait: ${done.status} ${JSON.stringify(done.json)}`);
  if (steps !== undefined) recordSteps(steps, sent, received, done.json);
  trace?.operations.push({ id: String(done.json.id), key });
}

/** The hops of the figure's operations, once every process has written its marks out. */
async function tracedHops(plane: DeployedPlane, trace: BenchTrace | undefined): Promise<PathHops | undefined> {
  if (trace === undefined || plane.pathTraceDir === undefined) return undefined;
  // Each process writes its marks out every 100 ms.
  await new Promise((r) => setTimeout(r, 300));
  return pathHops(trace.operations, [...trace.marks, ...readPathTraces(plane.pathTraceDir)]);
}

const within = (value: number | null, limit: number) => value !== null && value <= limit;

/**
 * Table round trips an operation's path makes one after another, each waiting for the one before it:
 * the API stores the operation (its item, queue entry and account entry at once), the replica claims
 * it and writes the result. With wakes and result asks on, the API stores it already handed out to the
 * agent a replica reserved (no claim: docs/operations.md#handed-out-at-creation), and the replica's
 * answer to the API's result ask carries the finished operation: two. With wakes on and result asks
 * off (no reservations either) the wake names the operation and the replica claims it without reading
 * its queue first; without wakes the replica reads its queue before the claim; without result asks
 * the API reads the result back.
 */
export function pathRoundTrips(wakes: WakesMode, resultAsks: boolean): number {
  if (wakes === 'on' && resultAsks) return 2;
  return 3 + (wakes === 'on' ? 0 : 1) + 1;
}

/** `n` conditional UpdateItems of an item of the bench's own, one after another, timed. */
async function tableRoundTrips(plane: DeployedPlane, n: number): Promise<{ n: number; p50_ms: number | null; p99_ms: number | null }> {
  const t = plane.tableClient();
  const Key = { pk: 'BENCH#round-trip', sk: randomUUID() };
  await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...Key, n: 0 } }));
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await t.client.send(
      new UpdateCommand({ TableName: t.tableName, Key, UpdateExpression: 'SET n = n + :one', ConditionExpression: 'n = :n', ExpressionAttributeValues: { ':one': 1, ':n': i } }),
    );
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { n, p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)) };
}

export async function runDeployedOperations(options: DeployedOptions, emit: (line: Line) => void): Promise<Line[]> {
  const lines: Line[] = [];
  const out = (l: Line) => {
    lines.push(l);
    emit(l);
  };
  const traced = options.pathTrace !== 'off';
  const plane = await startDeployedPlane({ accounts: { test: 1, real: options.real ? 1 : 0 }, ...planeOptions(options), pathTrace: traced });
  try {
    await activateAll(plane);
    if (options.real && plane.realUnavailable !== undefined) {
      out({ bench: 'operations', figure: 'deploy_1_manifest_deployed', target: TARGET_NAMES.real, skipped: plane.realUnavailable });
    }
    let warmed = 0;
    for (const account of plane.accounts) {
      const client = plane.raw[account.target];
      if (client === undefined) continue;
      for (let i = 0; i < options.warmup; i++) {
        await operate(plane, account.name, deployment(`warm-${i}`, account.namespace));
        await rawApply(client, deployment(`warm-raw-${i}`, account.namespace));
      }
      warmed += options.warmup;
      const load = loadAverage();
      const cpuBefore = plane.cpuMs();
      const steps = Object.fromEntries(STEPS.map((s) => [s, []])) as unknown as Steps;
      const trace: BenchTrace | undefined = traced ? { marks: [], operations: [] } : undefined;
      const [path, raw] = await alternate(
        options.rounds,
        (i) => operate(plane, account.name, deployment(`one-${i}`, account.namespace), steps, trace),
        (i) => rawApply(client, deployment(`one-raw-${i}`, account.namespace)),
      );
      const cpuAfter = plane.cpuMs();
      const hops = await tracedHops(plane, trace);
      const roundTrip = await tableRoundTrips(plane, options.rounds);
      const roundTrips = pathRoundTrips(options.wakes, options.resultAsks !== 'off');
      const floorP50 = raw.p50_ms === null || roundTrip.p50_ms === null ? null : round(raw.p50_ms + roundTrips * roundTrip.p50_ms);
      const ratioP50 = ratio(path.p50_ms, raw.p50_ms);
      const ratioP99 = ratio(path.p99_ms, raw.p99_ms);
      out({
        bench: 'operations',
        figure: 'deploy_1_manifest_deployed',
        target: TARGET_NAMES[account.target],
        layout: LAYOUT,
        wakes: options.wakes,
        ...(options.resultAsks === undefined ? {} : { result_asks: options.resultAsks }),
        poll_interval_ms: options.pollIntervalMs,
        // Operations the plane served before the figure's rounds (each account's warm-up, and the rounds of the accounts before it).
        warm_operations: warmed,
        path: 'POST ?wait (Idempotency-Key) until SUCCEEDED, over HTTP through the Lambda adapter',
        ...path,
        steps_p50_ms: stepPercentiles(steps, 50),
        steps_p99_ms: stepPercentiles(steps, 99),
        ...(hops === undefined ? {} : { hops_n: hops.n, hops_p50_ms: hops.p50_ms, hops_p99_ms: hops.p99_ms, ...(hops.partial === undefined ? {} : { hops_partial: hops.partial }), hops_side_p50_ms: hops.side_p50_ms, agent_cpu_p50_ms: hops.agent_cpu_p50_ms, agent_cpu_p99_ms: hops.agent_cpu_p99_ms }),
        baseline: { what: `one server-side apply of the same Deployment to the same ${TARGET_NAMES[account.target]}, with the agent's cluster client`, ...raw },
        ratio_p50: ratioP50,
        ratio_p99: ratioP99,
        table_round_trip: { what: 'one conditional UpdateItem from the bench to the same table process, after the rounds', ...roundTrip },
        floor: {
          what: `the apply plus the ${roundTrips} table round trips the path makes one after another (docs/benchmarks.md#operations-npm-run-benchoperations), nothing else`,
          p50_ms: floorP50,
          ratio_p50: floorP50 === null ? null : ratio(floorP50, raw.p50_ms),
        },
        ...(account.target === 'real' ? { target_ratio_p50: 3, target_ratio_p99: 6, met: within(ratioP50, 3) && within(ratioP99, 6) } : {}),
        cpu_ms: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, v - (cpuBefore[k] ?? 0)])),
        cpu_ms_per_operation: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, round((v - (cpuBefore[k] ?? 0)) / options.rounds, 1)])),
        load_average_1m: load,
      });
      warmed += options.rounds;
    }
    return lines;
  } finally {
    await plane.close();
  }
}

/** PATCH to ACTIVE through the Lambda API until a replica recorded the agent's confirmation, `rounds` accounts one by one. */
export async function benchPatchToActiveDeployed(options: Omit<DeployedOptions, 'real' | 'warmup'> & { hops?: boolean }, emit: (line: Line) => void): Promise<Line> {
  const hops = options.hops ?? true;
  const plane = await startDeployedPlane({ accounts: { test: 1, real: 0 }, spareAccounts: options.rounds, ...planeOptions(options), debugRecords: hops });
  try {
    await activateAll(plane);
    const waiting = new Map<string, (at: number) => void>();
    const records: HopRecord[] = [];
    const activations: Activation[] = [];
    for (const driver of plane.drivers) {
      driver.onRecord((r) => {
        const hop = hops ? hopRecord(r) : undefined;
        if (hop !== undefined) records.push(hop);
        if (r['msg'] === 'assignment result' && r['ok'] === true && r['outcome'] === 'recorded') waiting.get(String(r['account']))?.(performance.now());
      });
    }
    const spare = plane.spareAccounts;
    const posted = await apiRequest(plane, 'POST', '/vendor/accounts', spare.map((a) => ({ name: a.name, zoneId: a.zone })));
    if (posted.status >= 300) throw new Error(`POST /vendor/accounts: ${posted.status} ${JSON.stringify(posted.json)}`);
    // Baseline: the agent's cluster check alone (GET /version over TLS with the agent's client).
    const client = plane.raw.test;
    const checks: number[] = [];
    for (let i = 0; i < 20 && client !== undefined; i++) {
      const t = performance.now();
      await client.request({ method: 'GET', path: '/version' });
      checks.push(performance.now() - t);
    }
    const load = loadAverage();
    const latencies: number[] = [];
    const responses: number[] = [];
    const cpuBefore = plane.cpuMs();
    for (const account of spare) {
      // PATCHes arrive at random points of the replicas' read cycles, as an operator's would.
      await new Promise((r) => setTimeout(r, Math.random() * options.pollIntervalMs));
      const confirmed = new Promise<number>((resolve) => waiting.set(account.name, resolve));
      const startedAt = Date.now();
      const started = performance.now();
      const patched = await apiRequest(plane, 'PATCH', '/vendor/accounts', [{ name: account.name, state: 'ACTIVE' }]);
      const answered = performance.now();
      if (patched.status !== 200) throw new Error(`PATCH ${account.name}: ${patched.status} ${JSON.stringify(patched.json)}`);
      const ended = await confirmed;
      latencies.push(ended - started);
      responses.push(answered - started);
      activations.push({ account: account.name, startedAt, endedAt: startedAt + (ended - started) });
    }
    const cpuAfter = plane.cpuMs();
    if (hops) for (const file of plane.agentLogFiles) records.push(...hopRecordsOfFile(file));
    const sorted = [...latencies].sort((a, b) => a - b);
    const checkSorted = [...checks].sort((a, b) => a - b);
    const p50 = round(percentile(sorted, 50));
    const p99 = round(percentile(sorted, 99));
    const line: Line = {
      bench: 'assign',
      figure: 'patch_to_active_deployed',
      layout: LAYOUT,
      wakes: options.wakes,
      poll_interval_ms: options.pollIntervalMs,
      agents: 'a real agent process (agent/main.ts): GET /version on the test API server over TLS before confirming',
      n: sorted.length,
      p50_ms: p50,
      p99_ms: p99,
      max_ms: round(sorted.at(-1) ?? 0),
      patch_response_p50_ms: round(percentile([...responses].sort((a, b) => a - b), 50)),
      ...(hops ? { hops: hopBreakdown(activations, records) } : {}),
      // CPU time of each process per activation (the pauses between rounds included): what the load does not change.
      cpu_ms_per_activation: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, round((v - (cpuBefore[k] ?? 0)) / Math.max(1, sorted.length), 2)])),
      baseline: { what: "the agent's cluster check alone: GET /version over TLS with the agent's client", p50_ms: round(percentile(checkSorted, 50)), p99_ms: round(percentile(checkSorted, 99)) },
      target_p50_ms: 40,
      target_p99_ms: 100,
      met: p50 <= 40 && p99 <= 100,
      // Where wakes are off, what the poll alone allows.
      poll_bound_p99_ms: options.pollIntervalMs + 100,
      within_poll_bound: p99 <= options.pollIntervalMs + 100,
      load_average_1m: load,
    };
    emit(line);
    return line;
  } finally {
    await plane.close();
  }
}

const BENCH_WAKE_SECRET = 'bench-wake-secret-0123456789abcdef0123';

/**
 * The replicas' and the API's settings for a wakes mode: `on` gives both the wake secret and each
 * replica a wake endpoint on loopback; `off` keeps the secret but turns the replicas' endpoint off
 * (`wake.enabled: false`), so the API has nowhere to send and every hand-off waits for a poll.
 */
export function wakesSettings(mode: WakesMode, resultAsks = true): { driverConfig?: Record<string, unknown>; env?: Record<string, string> } {
  if (mode === 'absent') return {};
  return {
    driverConfig: { wake: mode === 'on' ? { enabled: true, host: '127.0.0.1', port: 0, results: resultAsks } : { enabled: false } },
    env: { VENDOR_WAKE_SECRET: BENCH_WAKE_SECRET },
  };
}

/** BENCH_WAKES: a comma-separated list of wakes modes, each measured in turn. */
export function wakesModes(raw: string | undefined, fallback: WakesMode[]): WakesMode[] {
  if (raw === undefined || raw === '') return fallback;
  const modes = raw.split(',').map((m) => m.trim());
  for (const m of modes) if (m !== 'on' && m !== 'off' && m !== 'absent') throw new Error(`BENCH_WAKES: ${JSON.stringify(m)} is not on, off or absent`);
  return modes as WakesMode[];
}
