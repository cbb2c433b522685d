/**
 * `npm run bench:density`: one agent holding many accounts, each a cluster of its own, beside a
 * baseline of `@kubernetes/client-node` informers measured in the same run.
 *
 * - Clusters: `accounts` test API servers (test/kube), each a server of its own (port, CA and serving
 *   certificate, bearer token, store), hosted `hosts` processes at a time (bench/density-clusters.ts),
 *   each seeded with `objects` realistic objects of the benchmark's 10 kinds (bench/cache-child.ts).
 * - Control plane: the table (dynalite) in a process of its own (at normal priority: the sync is seen
 *   in the table); the real driver with every module (`DRIVER_MODULES`) in this process.
 * - Agent: `agent/main.ts` in a process of its own, with the Node flags of its image, and its accounts
 *   defined the way a fleet defines static accounts: in its vendor-agent.yml, one entry per account
 *   with its own kubeconfig file and `kinds` naming the benchmark's kinds. The driver registers them,
 *   hands them back and elects the agent to cache them, as in production.
 * - `first_full_sync`: from spawning the agent until the table shows, for every account, cache health
 *   in which every kind watches and a resumable resourceVersion for every kind (`fullySynced`).
 * - RSS of the agent (VmRSS) after the sync and a quiet `settleMs`, then after `churnSeconds` of light
 *   churn (`churnPerSecond` updates a second spread over every cluster) and another `settleMs`.
 * - Baseline: one process with one informer per kind per cluster, the same kinds on the same servers,
 *   started together; its sync time (from spawn until every informer has listed) and its RSS at the
 *   same points, with the same churn.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import { DRIVER_MODULES } from '../driver/modules.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { silentLogger } from '../shared/log.ts';
import { batchGet } from '../shared/table/core/batch.ts';
import { cacheHealthOfItem, getCacheHealthParams, type CacheHealthRecord } from '../shared/table/resources/health.ts';
import { cachePk } from '../shared/table/resources/keys.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { scopeProgress, type ScopeProgressRecord } from '../shared/table/resources/scopes.ts';
import { BENCH_KINDS } from './cache-child.ts';
import { kubeconfigPath, spreadUpdates } from './density-clusters.ts';
import { agentTimeline, CpuSplit, HandlerTrace } from './density-trace.ts';
import { ratio, round } from './stats.ts';
import { loadAverage, procStats, startBenchTable, type BenchTable, type Line } from './support.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'bench-density-token-000000000001';
/** What `NODE_OPTIONS` holds in the agent's image and `npm run agent` passes. */
const AGENT_NODE_FLAGS = ['--max-semi-space-size=2'];
export const DENSITY_TARGETS = { settledRssMiB: 512, firstFullSyncMs: 30_000 };

export interface DensityOptions {
  accounts: number;
  /** Processes hosting the clusters. */
  hosts: number;
  objects: number;
  namespaces: number;
  settleMs: number;
  churnPerSecond: number;
  churnSeconds: number;
  /** Port of the agent's profiling endpoint (`pprof.enabled`), when wanted. */
  pprofPort?: number;
  /** Longest wait for the sync of either side. */
  syncTimeoutMs?: number;
  /** Emit `sync_trace`: the driver's time per message kind and the agent's timeline (its log at level info). */
  trace?: boolean;
  /** Where the agent writes CPU profiles of its threads (`--cpu-prof-dir`), when wanted. */
  agentCpuProfileDir?: string;
  /** With `trace`: where to write the agent's log records of the sync. */
  traceLogFile?: string;
}

/**
 * Whether the control plane shows the account fully synced: its stored cache health has every one of
 * `kinds` watching in every scope, and every kind has a resumable resourceVersion (written once its
 * list, or its WatchList's initial events, reached the driver: a WatchList watches before it has listed).
 */
export function fullySynced(health: Pick<CacheHealthRecord, 'kinds'> | undefined, progress: readonly Pick<ScopeProgressRecord, 'scope'>[], kinds: readonly string[]): boolean {
  if (health === undefined) return false;
  return kinds.every((kind) => {
    const k = health.kinds.find((h) => h.kind === kind);
    return k !== undefined && k.scopes > 0 && k.watching === k.scopes && progress.some((p) => p.scope.kind === kind);
  });
}

/** The vendor-agent.yml of the benchmark's agent: one static account per cluster. */
export function densityAgentConfig(input: { driverPort: number; dir: string; accounts: number; healthPort?: number; pprofPort?: number; logLevel?: string }): Record<string, unknown> {
  return {
    driver: { grpc: `127.0.0.1:${input.driverPort}`, insecure: true, auth: { token: TOKEN } },
    server: { host: '127.0.0.1', port: input.healthPort ?? 0 },
    logging: { format: 'json', level: input.logLevel ?? 'warn' },
    ...(input.pprofPort === undefined ? {} : { pprof: { enabled: true, port: input.pprofPort } }),
    kubernetes: {
      accounts: Array.from({ length: input.accounts }, (_, i) => ({
        name: accountName(i),
        kubeConfigFile: kubeconfigPath(input.dir, i),
        kinds: BENCH_KINDS.map((k) => k.kind),
      })),
    },
  };
}

export const accountName = (i: number) => `density-${String(i).padStart(3, '0')}`;

/** A child process whose stdout lines are JSON (others are passed to stderr). */
class JsonChild {
  readonly process: ChildProcess;
  readonly startedAt = performance.now();
  readonly spawnedAt = Date.now();
  readonly #lines: Line[] = [];
  #wake: (() => void) | undefined;
  #exit: number | null | undefined;

  constructor(args: string[], env: NodeJS.ProcessEnv = process.env) {
    this.process = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.process.stdout! }).on('line', (l) => {
      try {
        this.#lines.push(JSON.parse(l) as Line);
      } catch {
        process.stderr.write(`${l}\n`);
      }
      this.#wake?.();
    });
    this.process.on('exit', (code) => {
      this.#exit = code;
      this.#wake?.();
    });
  }

  get pid(): number {
    return this.process.pid as number;
  }

  async next(match: (l: Line) => boolean, what: string): Promise<Line> {
    for (;;) {
      const i = this.#lines.findIndex(match);
      if (i >= 0) return this.#lines.splice(i, 1)[0]!;
      const failed = this.#lines.find((l) => l['event'] === 'error' || l['event'] === 'informer-error');
      if (failed !== undefined) throw new Error(`child failed: ${JSON.stringify(failed)}`);
      if (this.#exit !== undefined) throw new Error(`child exited (${this.#exit}) before ${what}`);
      await new Promise<void>((r) => (this.#wake = r));
    }
  }

  /** The lines read and not yet taken. */
  lines(): readonly Line[] {
    return this.#lines;
  }

  /** Drops the lines read so far (an agent's log), keeping memory flat. */
  discard(): void {
    this.#lines.length = 0;
  }

  send(command: string): void {
    this.process.stdin!.write(`${command}\n`);
  }

  async stop(signal: NodeJS.Signals | 'stdin' = 'SIGTERM'): Promise<void> {
    if (this.#exit !== undefined) return;
    const exited = new Promise((r) => this.process.once('exit', r));
    if (signal === 'stdin') this.send('stop');
    else this.process.kill(signal);
    await exited;
  }
}

/** A port free at the moment of asking, for the agent's health server (its /cache is read). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Whether the agent's own /cache shows `scopes` scopes, every one of them watching (listed and watching). */
async function agentWatchesAll(healthPort: number, scopes: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${healthPort}/cache`);
    const body = (await res.json()) as { accounts: { scopes: { state: string }[] }[] };
    const states = body.accounts.flatMap((a) => a.scopes.map((s) => s.state));
    return states.length === scopes && states.every((s) => s === 'watching');
  } catch {
    return false;
  }
}

const mib = (bytes: number) => round(bytes / 1_048_576, 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMiB = (pid: number) => mib(procStats(pid).rssBytes);
const cpuMs = (pid: number) => procStats(pid).cpuTicks * 10;

/** Every cluster host's churn at once, the rate split over the hosts as the clusters are. */
async function churnAll(hosts: readonly JsonChild[], clustersPerHost: readonly number[], perSecond: number, seconds: number): Promise<number> {
  const total = clustersPerHost.reduce((a, b) => a + b, 0);
  const rates = clustersPerHost.map((n) => Math.round((perSecond * n) / total));
  hosts.forEach((h, i) => h.send(`churn ${rates[i]}x${seconds}`));
  const done = await Promise.all(hosts.map((h) => h.next((l) => l['event'] === 'churned', 'the churn ended')));
  return done.reduce((n, l) => n + (l['updated'] as number), 0);
}

/** RSS samples of a process every `everyMs` while `during` runs: the highest seen. */
async function highestRssDuring<T>(pid: number, everyMs: number, during: Promise<T>): Promise<{ result: T; highestMiB: number }> {
  let highest = rssMiB(pid);
  let done = false;
  const sampling = (async () => {
    while (!done) {
      await sleep(everyMs);
      if (!done) highest = Math.max(highest, rssMiB(pid));
    }
  })();
  const result = await during;
  done = true;
  await sampling;
  return { result, highestMiB: highest };
}

interface SideFigures {
  sync_ms: number;
  rss_at_sync_mib: number;
  settled_rss_mib: number;
  highest_rss_during_churn_mib: number;
  rss_after_churn_mib: number;
  cpu_ms_sync: number;
  cpu_ms_churn: number;
  churn_updates: number;
}

async function measureSide(
  child: JsonChild,
  synced: () => Promise<void>,
  options: DensityOptions,
  hosts: readonly JsonChild[],
  clustersPerHost: readonly number[],
): Promise<SideFigures> {
  await synced();
  const syncMs = performance.now() - child.startedAt;
  const cpuSync = cpuMs(child.pid);
  const rssAtSync = rssMiB(child.pid);
  await sleep(options.settleMs);
  const settled = rssMiB(child.pid);
  const cpuBefore = cpuMs(child.pid);
  const churned = await highestRssDuring(child.pid, 1000, churnAll(hosts, clustersPerHost, options.churnPerSecond, options.churnSeconds));
  const cpuChurn = cpuMs(child.pid) - cpuBefore;
  await sleep(options.settleMs);
  return {
    sync_ms: round(syncMs),
    rss_at_sync_mib: rssAtSync,
    settled_rss_mib: settled,
    highest_rss_during_churn_mib: churned.highestMiB,
    rss_after_churn_mib: rssMiB(child.pid),
    cpu_ms_sync: cpuSync,
    cpu_ms_churn: cpuChurn,
    churn_updates: churned.result,
  };
}

/** The stored cache health of each of `accounts` that has one, read 100 to a BatchGetItem. */
async function cacheHealths(table: TableRef, accounts: readonly string[]): Promise<Map<string, CacheHealthRecord>> {
  const items = await batchGet(table, accounts, (names) => ({ RequestItems: { [table.tableName]: { Keys: names.map((n) => getCacheHealthParams(table.tableName, n).Key!) } } }), 'the table keeps throttling the bench');
  return new Map(items.map((i) => [String(i.pk).slice(cachePk('').length), cacheHealthOfItem(i)]));
}

/**
 * Waits until the table shows every account fully synced (`fullySynced`); polls it. The healths of
 * the accounts still pending are read together, and an account's progress only once its health has
 * every kind watching, so the polling costs the table little beside what it measures.
 */
async function allAccountsWatching(table: TableRef, accounts: number, timeoutMs: number, onAccount: (name: string) => void): Promise<void> {
  const kinds = BENCH_KINDS.map((k) => k.kind);
  const pending = new Set(Array.from({ length: accounts }, (_, i) => accountName(i)));
  const deadline = performance.now() + timeoutMs;
  while (pending.size > 0) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${pending.size} accounts to watch every kind, e.g. ${[...pending][0]}`);
    try {
      const healths = await cacheHealths(table, [...pending]);
      for (const [n, health] of healths) {
        if (!fullySynced(health, kinds.map((kind) => ({ scope: { group: '', kind, namespace: '' } })), kinds)) continue;
        if (fullySynced(health, await scopeProgress(table, n), kinds)) {
          pending.delete(n);
          onAccount(n);
        }
      }
    } catch {
      // The table did not answer in time (a loaded machine): asked again on the next round.
    }
    if (pending.size > 0) await sleep(100);
  }
}

export async function benchDensity(options: DensityOptions, emit: (l: Line) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-density-'));
  const hosts: JsonChild[] = [];
  let table: BenchTable | undefined;
  let driver: Driver | undefined;
  const children: JsonChild[] = [];
  const timeoutMs = options.syncTimeoutMs ?? 600_000;
  const trace = options.trace === true ? new HandlerTrace() : undefined;
  try {
    // ---- the clusters ----
    const clustersPerHost = spreadUpdates(options.accounts, Math.min(options.hosts, options.accounts));
    let first = 0;
    for (const count of clustersPerHost) {
      hosts.push(new JsonChild(['bench/density-clusters.ts', JSON.stringify({ first, count, objects: options.objects, namespaces: options.namespaces, dir })]));
      first += count;
    }
    const ready = await Promise.all(hosts.map((h) => h.next((l) => l['event'] === 'ready', 'the clusters were seeded')));
    const seeded: Record<string, number> = {};
    for (const r of ready) for (const [k, n] of Object.entries(r['seeded'] as Record<string, number>)) seeded[k] = (seeded[k] ?? 0) + n;
    const urls = new Set(ready.flatMap((r) => (r['clusters'] as { url: string }[]).map((c) => c.url)));
    emit({ bench: 'density', figure: 'seeded', accounts: options.accounts, distinct_servers: urls.size, host_processes: hosts.length, objects_per_cluster: options.objects, kinds: seeded, seed_ms: Math.max(...ready.map((r) => r['seedMs'] as number)) });

    // ---- the control plane ----
    // At normal priority, unlike bench:cache: the sync is seen in the table, so the table's lag is part of it.
    table = await startBenchTable('process');
    const tableRef = table.client();
    driver = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
      table: trace === undefined ? tableRef : table.client(trace.meter),
      log: silentLogger(),
      modules: trace === undefined ? DRIVER_MODULES : trace.wrap(DRIVER_MODULES),
    });
    const loads: number[] = [loadAverage()];

    // ---- the agent ----
    const configPath = join(dir, 'vendor-agent.yml');
    const healthPort = await freePort();
    writeFileSync(configPath, stringify(densityAgentConfig({ driverPort: driver.port, dir, accounts: options.accounts, healthPort, ...(trace === undefined ? {} : { logLevel: 'info' }), ...(options.pprofPort === undefined ? {} : { pprofPort: options.pprofPort }) })));
    const env = { ...process.env, VENDOR_AGENT_ID: 'density-agent', VENDOR_DEPLOYMENT_NAME: 'bench', POD_NAMESPACE: 'density' };
    const profiling = options.agentCpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.agentCpuProfileDir}`];
    const cpu = new CpuSplit({ table: table.pid === undefined ? [] : [table.pid], cluster_hosts: hosts.map((h) => h.pid) });
    cpu.start();
    const agent = new JsonChild([...AGENT_NODE_FLAGS, ...profiling, 'agent/main.ts', '--config', configPath], env);
    children.push(agent);
    const watchingAt: number[] = [];
    // The agent's own view, beside the control plane's: every scope listed and watching in its /cache.
    let agentWatchingMs: number | undefined;
    const agentView = (async () => {
      while (agentWatchingMs === undefined && performance.now() - agent.startedAt < timeoutMs) {
        if (await agentWatchesAll(healthPort, options.accounts * BENCH_KINDS.length)) agentWatchingMs = performance.now() - agent.startedAt;
        else await sleep(100);
      }
    })();
    let cpuAtSync: Record<string, number> = {};
    const agentFigures = await measureSide(
      agent,
      async () => {
        await allAccountsWatching(tableRef, options.accounts, timeoutMs, () => watchingAt.push(performance.now() - agent.startedAt));
        cpuAtSync = cpu.since();
      },
      options,
      hosts,
      clustersPerHost,
    );
    await agentView;
    if (trace !== undefined) {
      const sorted = [...watchingAt].sort((a, b) => a - b);
      if (options.traceLogFile !== undefined) writeFileSync(options.traceLogFile, agent.lines().map((l) => JSON.stringify(l)).join('\n'));
      emit({ bench: 'density', figure: 'sync_trace', cpu_ms_until_sync: { agent: agentFigures.cpu_ms_sync, ...cpuAtSync }, driver_table_requests: Object.fromEntries(trace.meter.operations), agent: agentTimeline(agent.lines(), agent.spawnedAt), table_accounts_complete: { first_ms: round(sorted[0] ?? NaN), half_ms: round(sorted[Math.floor(sorted.length / 2)] ?? NaN), last_ms: round(sorted[sorted.length - 1] ?? NaN) }, driver_handlers: trace.figures() });
    }
    agent.discard();
    loads.push(loadAverage());
    const stored = await Promise.all(Array.from({ length: options.accounts }, (_, i) => scopeProgress(tableRef, accountName(i))));
    const objectsStored = stored.reduce((n, scopes) => n + scopes.reduce((m, p) => m + p.objects, 0), 0);
    await agent.stop();

    // ---- the baseline ----
    const informers = new JsonChild(['bench/density-informers.ts', ...Array.from({ length: options.accounts }, (_, i) => kubeconfigPath(dir, i))]);
    children.push(informers);
    let baselineObjects = 0;
    const baseline = await measureSide(
      informers,
      async () => {
        baselineObjects = (await informers.next((l) => l['event'] === 'synced', 'the informers synced'))['objects'] as number;
      },
      options,
      hosts,
      clustersPerHost,
    );
    loads.push(loadAverage());
    await informers.stop('stdin');

    const load = round(Math.max(...loads), 2);
    const sorted = [...watchingAt].sort((a, b) => a - b);
    emit({
      bench: 'density', figure: 'first_full_sync', value: agentFigures.sync_ms, unit: 'ms', accounts: options.accounts,
      accounts_from: 'static accounts in the agent\'s vendor-agent.yml, registered, assigned and elected for caching by the driver',
      agent_all_watching_ms: round(agentWatchingMs ?? NaN), first_account_watching_ms: round(sorted[0] ?? NaN), half_watching_ms: round(sorted[Math.floor(sorted.length / 2)] ?? NaN),
      objects_in_scope_progress: objectsStored, agent_cpu_ms: agentFigures.cpu_ms_sync,
      baseline: baseline.sync_ms, baseline_objects: baselineObjects, baseline_cpu_ms: baseline.cpu_ms_sync, ratio: ratio(agentFigures.sync_ms, baseline.sync_ms),
      target: `<= ${DENSITY_TARGETS.firstFullSyncMs} ms`, met: agentFigures.sync_ms <= DENSITY_TARGETS.firstFullSyncMs, load_average_1m: load,
    });
    emit({ bench: 'density', figure: 'rss_at_sync', value: agentFigures.rss_at_sync_mib, unit: 'MiB', baseline: baseline.rss_at_sync_mib, ratio: ratio(agentFigures.rss_at_sync_mib, baseline.rss_at_sync_mib) });
    emit({
      bench: 'density', figure: 'settled_rss', value: agentFigures.settled_rss_mib, unit: 'MiB', after_ms: options.settleMs,
      baseline: baseline.settled_rss_mib, ratio: ratio(agentFigures.settled_rss_mib, baseline.settled_rss_mib),
      target: `<= ${DENSITY_TARGETS.settledRssMiB} MiB`, met: agentFigures.settled_rss_mib <= DENSITY_TARGETS.settledRssMiB,
    });
    emit({
      bench: 'density', figure: 'rss_after_churn', value: agentFigures.rss_after_churn_mib, unit: 'MiB',
      churn: { per_second: options.churnPerSecond, seconds: options.churnSeconds, updates: agentFigures.churn_updates, baseline_updates: baseline.churn_updates },
      highest_during_churn: agentFigures.highest_rss_during_churn_mib, baseline: baseline.rss_after_churn_mib, baseline_highest_during_churn: baseline.highest_rss_during_churn_mib,
      ratio: ratio(agentFigures.rss_after_churn_mib, baseline.rss_after_churn_mib),
      target: `<= ${DENSITY_TARGETS.settledRssMiB} MiB`, met: agentFigures.rss_after_churn_mib <= DENSITY_TARGETS.settledRssMiB,
    });
    emit({
      bench: 'density', figure: 'cpu_during_churn', value: agentFigures.cpu_ms_churn, unit: 'ms', baseline: baseline.cpu_ms_churn, ratio: ratio(agentFigures.cpu_ms_churn, baseline.cpu_ms_churn),
      us_per_update: round((agentFigures.cpu_ms_churn * 1000) / Math.max(1, agentFigures.churn_updates)), baseline_us_per_update: round((baseline.cpu_ms_churn * 1000) / Math.max(1, baseline.churn_updates)),
      load_average_1m: load,
    });
  } finally {
    for (const c of children) await c.stop('SIGKILL');
    await driver?.close(100);
    await table?.close();
    await Promise.all(hosts.map((h) => h.stop('stdin')));
    rmSync(dir, { recursive: true, force: true });
  }
}
