/**
 * `npm run bench:agent-start`: how long `node agent/main.ts` takes from process start to ready, and
 * what it holds in memory once idle, for 1 and for 100 accounts, beside a bare Node process that only
 * loads the agent's dependencies, measured in the same run, alternating.
 *
 * - The agent is its own process (`agent/main.ts`, as the container runs it), with static accounts in
 *   its vendor-agent.yml, each with its own kubeconfig file pointing at the test Kubernetes API server
 *   (its own process, `test/kube/main.ts`, over TLS with a bearer token). The driver is the real one
 *   (`startDriver` with every module) on an embedded table in this process.
 * - `ready`: the agent's `/readyz` answers 200 (configuration valid and a stream to the driver
 *   welcomed), polled every 10 ms from the moment the health server says where it listens.
 * - `all_confirmed`: the driver has recorded an ok answer for every account, that is the agent
 *   announced them in Hello, was assigned them back, connected to the cluster with each account's
 *   kubeconfig and asked GET /version.
 * - With 0 accounts the agent's accounts would come from the driver: ready is all there is to wait for.
 * - `cpu_at_ready`: CPU time (user + system) the process had used when it was first seen ready.
 * - `rss_idle`: VmRSS of the process `BENCH_IDLE_MS` after it is ready and every account is confirmed.
 * - baseline: `node -e` importing every package the agent's module graph imports (static and lazy),
 *   timed to the moment the imports are done; its RSS the same time later.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import { DRIVER_MODULES } from '../driver/modules.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/core/embedded.ts';
import { percentile, ratio, round } from './stats.ts';
import { eventLogger, loadAverage, procStats, until, type Line } from './support.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'bench-agent-token-000000000001';
const KUBE_TOKEN = 'bench-kube-token-0000000000000001';

export interface AgentStartOptions {
  /** Rounds; each runs the bare process and the agent once per account count, alternating. 0 accounts: an agent whose accounts come from the driver. */
  runs: number;
  accountCounts: readonly number[];
  /** How long after ready (and every account confirmed) RSS is read. */
  idleMs: number;
  /** Folder for `--cpu-prof` profiles of the agent processes, when wanted. */
  cpuProfDir?: string;
  /**
   * Every process (agent and bare) runs with Node's on-disk compile cache (`NODE_COMPILE_CACHE`),
   * warmed by one untimed run of each first, as an image built with a warmed cache would start.
   */
  compileCache?: boolean;
}

/**
 * Bare package names imported anywhere in the module graph of `entry` (static and, unless
 * `lazy: false`, `import()`), `node:` excluded.
 */
export function packagesImportedBy(entry: string, options: { lazy?: boolean } = {}): string[] {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pattern = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'([^']+)'|import\('([^']+)'\)/gm;
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(pattern)) {
      if (m[1] === undefined && options.lazy === false) continue;
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(entry);
  return [...packages].sort();
}

interface Started {
  child: ChildProcess;
  startedAt: number;
  lines: AsyncIterableIterator<string>;
}

function spawnTimed(args: string[], env: NodeJS.ProcessEnv): Started {
  const startedAt = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return { child, startedAt, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
}

async function lineMatching(s: Started, match: (line: string) => boolean, what: string): Promise<string> {
  for (;;) {
    const next = await s.lines.next();
    if (next.done === true) throw new Error(`the process ended before ${what}`);
    if (match(next.value)) return next.value;
  }
}

function status(url: string): Promise<number> {
  return new Promise((resolvePromise) => {
    const req = get(url, (res) => {
      res.resume();
      res.on('end', () => resolvePromise(res.statusCode ?? 0));
    });
    req.on('error', () => resolvePromise(0));
  });
}

async function stopChild(child: ChildProcess): Promise<{ code: number | null; ms: number }> {
  const t = performance.now();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  const code = await exited;
  return { code, ms: performance.now() - t };
}

const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  ready_ms: number;
  cpu_at_ready_ms: number;
  all_confirmed_ms: number;
  rss_idle_mib: number;
  cpu_ms: number;
  stop_ms: number;
  exit_code: number | null;
}

interface Kube {
  child: ChildProcess;
  kubeconfig: string;
}

async function startKube(dir: string): Promise<Kube> {
  const kubeconfig = join(dir, 'kubeconfig');
  const s = spawnTimed(['test/kube/main.ts', '--tls', '--token', KUBE_TOKEN, '--kubeconfig', kubeconfig], process.env);
  await lineMatching(s, (l) => l.startsWith('{"url"'), 'the test API server was ready');
  return { child: s.child, kubeconfig };
}

/** One bare process: node importing the agent's packages. */
async function runBare(packages: readonly string[], idleMs: number, env: NodeJS.ProcessEnv): Promise<{ loaded_ms: number; rss_idle_mib: number; cpu_ms: number }> {
  const script = `${packages.map((p) => `await import(${JSON.stringify(p)});`).join(' ')} console.log('loaded'); setInterval(() => {}, 1 << 30);`;
  const s = spawnTimed(['--input-type=module', '-e', script], env);
  await lineMatching(s, (l) => l === 'loaded', 'the imports were done');
  const loaded = performance.now() - s.startedAt;
  await sleep(idleMs);
  const stats = procStats(s.child.pid as number);
  await stopChild(s.child);
  return { loaded_ms: loaded, rss_idle_mib: mib(stats.rssBytes), cpu_ms: stats.cpuTicks * 10 };
}

class Confirmations {
  readonly #at = new Map<string, number>();
  record(account: string): void {
    if (!this.#at.has(account)) this.#at.set(account, performance.now());
  }
  /** When the last of `names` was confirmed, or undefined while some are not. */
  lastOf(names: readonly string[]): number | undefined {
    let last = -Infinity;
    for (const n of names) {
      const at = this.#at.get(n);
      if (at === undefined) return undefined;
      last = Math.max(last, at);
    }
    return last;
  }
}

async function runAgent(
  setup: { dir: string; driver: Driver; kube: Kube; confirmations: Confirmations; env: NodeJS.ProcessEnv; cpuProfDir?: string },
  accounts: number,
  id: string,
  idleMs: number,
): Promise<Sample> {
  const names = Array.from({ length: accounts }, (_, i) => `${id}-${String(i).padStart(3, '0')}`);
  const config = {
    driver: { grpc: `127.0.0.1:${setup.driver.port}`, insecure: true, auth: { token: TOKEN } },
    server: { host: '127.0.0.1', port: 0 },
    logging: { format: 'json', level: 'info' },
    kubernetes: {
      reconnectTimeoutMs: 200,
      accounts: names.map((name, i) => ({ name, kubeConfigFile: join(setup.dir, `kubeconfig-${i}`) })),
    },
  };
  const path = join(setup.dir, `${id}.yml`);
  writeFileSync(path, stringify(config));
  const flags = setup.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', setup.cpuProfDir, '--cpu-prof-name', `${id}.cpuprofile`];
  const env = { ...setup.env, VENDOR_AGENT_ID: id, VENDOR_DEPLOYMENT_NAME: 'bench', POD_NAMESPACE: 'start' };
  const s = spawnTimed([...flags, 'agent/main.ts', '--config', path], env);
  try {
    const health = (JSON.parse(await lineMatching(s, (l) => l.includes('"msg":"health server listening"'), 'the health server listened')) as { url: string }).url;
    // Drain the rest of its output so the pipe never fills.
    void (async () => {
      for await (const _ of s.lines);
    })();
    while ((await status(`${health}/readyz`)) !== 200) await sleep(10);
    const ready = performance.now() - s.startedAt;
    const cpuAtReady = procStats(s.child.pid as number).cpuTicks * 10;
    await until(() => setup.confirmations.lastOf(names) !== undefined, 120_000, `the ${accounts} accounts of ${id}`);
    const confirmed = Math.max(ready, (setup.confirmations.lastOf(names) as number) - s.startedAt);
    await sleep(idleMs);
    const stats = procStats(s.child.pid as number);
    const stopped = await stopChild(s.child);
    return { ready_ms: ready, cpu_at_ready_ms: cpuAtReady, all_confirmed_ms: confirmed, rss_idle_mib: mib(stats.rssBytes), cpu_ms: stats.cpuTicks * 10, stop_ms: stopped.ms, exit_code: stopped.code };
  } finally {
    s.child.kill('SIGKILL');
  }
}

const p50 = (xs: readonly number[]) => round(percentile([...xs].sort((a, b) => a - b), 50));

export async function benchAgentStart(options: AgentStartOptions, emit: (l: Line) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-agent-start-'));
  const packages = packagesImportedBy(join(ROOT, 'agent/main.ts'));
  let table: EmbeddedTable | undefined;
  let driver: Driver | undefined;
  let kube: Kube | undefined;
  try {
    kube = await startKube(dir);
    const most = Math.max(...options.accountCounts);
    for (let i = 0; i < most; i++) copyFileSync(kube.kubeconfig, join(dir, `kubeconfig-${i}`));
    table = await startEmbeddedTable();
    const confirmations = new Confirmations();
    const log = eventLogger((r) => {
      if (r['msg'] === 'assignment result' && r['ok'] === true && r['outcome'] === 'recorded') confirmations.record(String(r['account']));
    });
    driver = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
      table,
      log,
      modules: DRIVER_MODULES,
    });
    const env = options.compileCache === true ? { ...process.env, NODE_COMPILE_CACHE: join(dir, 'compile-cache') } : process.env;
    const setup = { dir, driver, kube, confirmations, env, ...(options.cpuProfDir === undefined ? {} : { cpuProfDir: options.cpuProfDir }) };
    if (options.compileCache === true) {
      await runBare(packages, 0, env);
      await runAgent(setup, 1, 'warm-cache', 0);
    }
    const bare: { loaded_ms: number; rss_idle_mib: number; cpu_ms: number }[] = [];
    const agents = new Map<number, Sample[]>(options.accountCounts.map((n) => [n, []]));
    // Each agent run over the bare run just before it: the machine's load moves both alike.
    const paired = new Map<number, number[]>(options.accountCounts.map((n) => [n, []]));
    const pairedConfirmed = new Map<number, number[]>(options.accountCounts.map((n) => [n, []]));
    const loads: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      for (const n of options.accountCounts) {
        const b = await runBare(packages, options.idleMs, env);
        bare.push(b);
        const a = await runAgent(setup, n, `start-${n}-${run}`, options.idleMs);
        agents.get(n)!.push(a);
        paired.get(n)!.push(a.ready_ms / b.loaded_ms);
        pairedConfirmed.get(n)!.push(a.all_confirmed_ms / b.loaded_ms);
        loads.push(loadAverage());
      }
    }
    const baseline = {
      what: 'bare node importing the agent\'s packages',
      packages,
      n: bare.length,
      loaded_p50_ms: p50(bare.map((b) => b.loaded_ms)),
      rss_idle_p50_mib: p50(bare.map((b) => b.rss_idle_mib)),
      cpu_p50_ms: p50(bare.map((b) => b.cpu_ms)),
    };
    for (const [n, samples] of agents) {
      const ready = p50(samples.map((s) => s.ready_ms));
      const rss = p50(samples.map((s) => s.rss_idle_mib));
      emit({
        bench: 'agent_start',
        figure: `start_${n}_account${n === 1 ? '' : 's'}${options.compileCache === true ? '_compile_cache' : ''}`,
        accounts: n,
        accounts_from:
          n === 0
            ? 'none in vendor-agent.yml (accounts come from the driver): ready is all there is'
            : 'static accounts in vendor-agent.yml, each with its own kubeconfig file (test API server, TLS, token)',
        runs: samples.length,
        ready_p50_ms: ready,
        cpu_at_ready_p50_ms: p50(samples.map((s) => s.cpu_at_ready_ms)),
        all_confirmed_p50_ms: p50(samples.map((s) => s.all_confirmed_ms)),
        rss_idle_p50_mib: rss,
        cpu_to_idle_p50_ms: p50(samples.map((s) => s.cpu_ms)),
        sigterm_to_exit_p50_ms: p50(samples.map((s) => s.stop_ms)),
        exit_codes: [...new Set(samples.map((s) => s.exit_code))],
        ready_ms: samples.map((s) => round(s.ready_ms, 1)),
        all_confirmed_ms: samples.map((s) => round(s.all_confirmed_ms, 1)),
        baseline: { ...baseline, packages: undefined },
        ratio_ready_to_baseline_loaded: ratio(ready, baseline.loaded_p50_ms),
        paired_ratio_ready_to_bare_p50: p50(paired.get(n)!),
        paired_ratio_all_confirmed_to_bare_p50: p50(pairedConfirmed.get(n)!),
        ratio_cpu_at_ready_to_baseline_cpu: ratio(p50(samples.map((s) => s.cpu_at_ready_ms)), baseline.cpu_p50_ms),
        ratio_rss_to_baseline: ratio(rss, baseline.rss_idle_p50_mib),
        load_average_1m: round(Math.max(...loads), 2),
      });
    }
    emit({ bench: 'agent_start', figure: 'baseline_packages', packages });
  } finally {
    await driver?.close(100);
    await table?.close();
    if (kube !== undefined) await stopChild(kube.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
