/**
 * The control plane in the layout production runs, on loopback, for the benchmarks: the table
 * (dynalite, bench/table-process.ts) in a process of its own as DynamoDB is a service of its own;
 * the management API as the Lambda function (bench/lambda-process.ts: functions/lambda.ts behind an
 * HTTP-to-Lambda adapter, callers with real OIDC tokens); `replicas` driver replicas
 * (`driver/main.ts`, bench/support.ts) in processes of their own as on ECS; real agents
 * (`agent/main.ts`) in processes of their own, spread over the replicas; and the Kubernetes API
 * servers the accounts point at: the test API server (test/kube/main.ts, TLS) and, where
 * test/cluster/provision.sh has built it, the real kube-apiserver with etcd (test/cluster/real-server.ts).
 *
 * Nothing is shared in memory between the API and the drivers: an operation or an activation reaches
 * a replica through the table (or, where the build has them, a wake).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { connectCluster, type ClusterClient } from '../agent/clusters/index.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger } from '../shared/log.ts';
import { PATH_TRACE_ENV } from '../shared/operations/path-trace.ts';
import type { CapacityMeter } from '../shared/table/core/capacity.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { findClusterBinaries } from '../test/cluster/binaries.ts';
import { startRealCluster, type RealCluster } from '../test/cluster/real-server.ts';
import { TestIssuer } from '../test/support/oidc.ts';
import { tableProcessEnv } from '../test/support/table-env.ts';
import { benchAgentConfig, cpuProfileArgs, jsonRequest, procStats, startBenchTable, startDriverProcess, until, type BenchTable, type DriverProcess, type JsonResponse } from './support.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AGENT_TOKEN = 'bench-deployed-agent-token-000000001';
const KUBE_TOKEN = 'bench-deployed-kube-token-0000000001';
const MANAGER_ROLE = 'vendor-admins';
const quiet = createLogger({ level: 'silent' });

/** Where an account's cluster is: the test API server, or the real kube-apiserver. */
export type KubeTarget = 'test' | 'real';

export interface DeployedAccount {
  name: string;
  target: KubeTarget;
  /** The zone of the account and of its agent (one agent per account). */
  zone: string;
  namespace: string;
}

export interface DeployedPlaneOptions {
  /** One agent (and namespace) per account, each in a zone of its own. */
  accounts: { test: number; real: number };
  replicas: number;
  /** `operations.pollIntervalMs` and `assignment.pollIntervalMs` of the replicas. */
  pollIntervalMs: number;
  /** Extra keys of each replica's vendor-driver.yml (e.g. to turn wakes off). */
  driverConfig?: Record<string, unknown>;
  /** Extra environment of the replicas and of the API (e.g. the wake secret). */
  env?: Record<string, string>;
  /**
   * Accounts defined beside them (on the test API server, in the first account's zone) that no call
   * here registers or activates: for figures that activate accounts one by one.
   */
  spareAccounts?: number;
  /** Kinds each agent caches: Namespaces only by default, so that the cache's writes stay out of the figures. */
  kinds?: string[];
  /**
   * Replicas and agents log at debug level (JSON), so that the records of each hop of an activation
   * can be read back (`agentLogFiles`, the replicas' `onRecord`): bench/activation-hops.ts.
   */
  debugRecords?: boolean;
  /**
   * The API, the replicas and the agents write the path trace (shared/operations/path-trace.ts) to
   * `pathTraceDir`: where an operation's time goes between them (bench/operations-hops.ts).
   */
  pathTrace?: boolean;
}

export interface DeployedPlane {
  apiUrl: string;
  /** A manager's bearer token from the loopback OIDC issuer. */
  token: string;
  table: BenchTable;
  /** A table client of the bench's own (seeding, reading back, baselines). */
  tableClient(meter?: CapacityMeter): TableRef;
  drivers: DriverProcess[];
  accounts: DeployedAccount[];
  spareAccounts: DeployedAccount[];
  /** Where the processes write the path trace, with `pathTrace`. */
  pathTraceDir?: string;
  /** Each agent's log file (JSON lines; at debug level with `debugRecords`). */
  agentLogFiles: string[];
  /** The bench's own client of each API server: the same client the agent uses, for the raw applies. */
  raw: Partial<Record<KubeTarget, ClusterClient>>;
  /** Why the real kube-apiserver is absent, when it is. */
  realUnavailable?: string;
  /** CPU time (ms) of each process so far. */
  cpuMs(): Record<string, number>;
  close(): Promise<void>;
}

/** A child process and the first line it prints. */
function child(args: string[], env: NodeJS.ProcessEnv = process.env): { process: ChildProcess; firstLine: Promise<string> } {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return { process: proc, firstLine };
}

const link = (value: string) => JSON.stringify({ type: 'sst.sst.Secret', value });

async function clusterClient(account: string, kubeconfig: string): Promise<ClusterClient> {
  return connectCluster(
    { account, kubeConfigFile: kubeconfig, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
    { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: false, retries: { enabled: false, maxRetries: 1, backOffMs: 0, retryAnyError: false, retryableErrors: [] }, clock: systemClock, logger: quiet },
  );
}

export async function startDeployedPlane(options: DeployedPlaneOptions): Promise<DeployedPlane> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-deployed-'));
  const stops: (() => Promise<void>)[] = [];
  const pids: Record<string, number> = {};
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  const stopChild = (proc: ChildProcess) => async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  };
  try {
    const pathTraceDir = options.pathTrace === true ? join(dir, 'path-trace') : undefined;
    const traceEnv: Record<string, string> = pathTraceDir === undefined ? {} : { [PATH_TRACE_ENV]: pathTraceDir };
    const table = await startBenchTable('process');
    stops.push(() => table.close());
    if (table.pid !== undefined) pids.table = table.pid;

    const kubeconfigs: Partial<Record<KubeTarget, string>> = {};
    const raw: Partial<Record<KubeTarget, ClusterClient>> = {};
    const testKube = join(dir, 'kubeconfig-test');
    const kube = child(['test/kube/main.ts', '--tls', '--token', KUBE_TOKEN, '--kubeconfig', testKube]);
    stops.push(stopChild(kube.process));
    await kube.firstLine;
    pids.test_api_server = kube.process.pid as number;
    kubeconfigs.test = testKube;
    let realUnavailable: string | undefined;
    let real: RealCluster | undefined;
    if (options.accounts.real > 0) {
      const binaries = findClusterBinaries();
      if (binaries.available) {
        real = await startRealCluster({ ...binaries, readyTimeoutMs: 180_000 });
        stops.push(() => (real as RealCluster).close());
        kubeconfigs.real = await real.writeKubeconfig(join(dir, 'kubeconfig-real'), 'token');
      } else realUnavailable = binaries.reason;
    }
    for (const target of ['test', 'real'] as const) {
      const path = kubeconfigs[target];
      if (path === undefined) continue;
      const client = await clusterClient(`raw-${target}`, path);
      stops.push(async () => client.close());
      raw[target] = client;
    }

    const accounts: DeployedAccount[] = [];
    for (const target of ['test', 'real'] as const) {
      if (kubeconfigs[target] === undefined) continue;
      for (let i = 0; i < options.accounts[target]; i++) {
        const n = accounts.length;
        accounts.push({ name: `bench-${target}-${i}`, target, zone: `bench_z${n}`, namespace: `bench-ns-${n}` });
      }
    }
    const spareAccounts: DeployedAccount[] = Array.from({ length: options.spareAccounts ?? 0 }, (_, i) => ({ name: `bench-spare-${i}`, target: 'test', zone: 'bench_z0', namespace: 'bench-ns-0' }));
    for (const a of accounts) {
      await (raw[a.target] as ClusterClient).request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: a.namespace } } }).catch(() => undefined);
    }

    // Every replica loads the same file, as the replicas of one deployment do.
    const driverFile = join(dir, 'vendor-driver.yml');
    writeFileSync(
      driverFile,
      stringify({
        grpc: { host: '127.0.0.1' },
        auth: { tokens: [AGENT_TOKEN] },
        operations: { pollIntervalMs: options.pollIntervalMs },
        assignment: { pollIntervalMs: options.pollIntervalMs },
        kubernetes: { accounts: [...accounts, ...spareAccounts].map((a) => ({ name: a.name, kubeconfigFile: kubeconfigs[a.target], kinds: options.kinds ?? ['Namespace'] })) },
        ...options.driverConfig,
      }),
    );
    const drivers: DriverProcess[] = [];
    const welcomed = new Set<string>();
    for (let r = 0; r < options.replicas; r++) {
      const driver = await startDriverProcess(table, driverFile, { ...options.env, ...traceEnv, ...(options.debugRecords === true ? { VENDOR_LOG_LEVEL: 'debug' } : {}) });
      driver.onRecord((record) => {
        if (record['msg'] === 'agent session opened') welcomed.add(String(record['agentId']));
      });
      stops.push(() => driver.close());
      drivers.push(driver);
      pids[`driver_${r + 1}`] = driver.pid;
    }

    const issuer = await TestIssuer.start();
    stops.push(() => issuer.close());
    await issuer.addKey('ES256');
    const token = await issuer.token({ sub: 'bench-manager', realm_access: { roles: [MANAGER_ROLE] } }, { ttl: 6 * 3600 });
    const lambda = child([...cpuProfileArgs(), 'bench/lambda-process.ts'], {
      ...process.env,
      ...tableProcessEnv(table),
      SST_RESOURCE_VendorOidcIssuer: link(issuer.url),
      SST_RESOURCE_VendorOidcAudience: link('vendor-api'),
      SST_RESOURCE_VendorOidcRolesClaim: link('realm_access.roles'),
      SST_RESOURCE_VendorAccountManagerRoles: link(MANAGER_ROLE),
      VENDOR_LOG_LEVEL: 'warn',
      ...options.env,
      ...traceEnv,
    });
    stops.push(stopChild(lambda.process));
    const apiUrl = `http://127.0.0.1:${(JSON.parse(await lambda.firstLine) as { port: number }).port}`;
    pids.api = lambda.process.pid as number;

    const agentLogFiles: string[] = [];
    accounts.forEach((a, i) => {
      const configPath = join(dir, `agent-${i}.yml`);
      const driver = drivers[i % drivers.length] as DriverProcess;
      const config = benchAgentConfig(driver.port, AGENT_TOKEN, dir, i);
      agentLogFiles.push(join(dir, `agent-${i}.log`));
      if (options.debugRecords === true) config.logging = { level: 'debug', format: 'json', file: agentLogFiles[i] };
      writeFileSync(configPath, stringify(config));
      const agent = spawn(process.execPath, [...cpuProfileArgs(), 'agent/main.ts', '--config', configPath], {
        cwd: ROOT,
        env: { ...process.env, ...traceEnv, VENDOR_AGENT_ID: `bench-agent-${i}`, VENDOR_DEPLOYMENT_NAME: 'bench', POD_NAMESPACE: a.zone.replace(/^bench_/, '') },
        stdio: 'ignore',
      });
      stops.push(stopChild(agent));
      pids[`agent_${i + 1}`] = agent.pid as number;
    });

    await until(() => welcomed.size === accounts.length, 120_000, 'every agent to be welcomed');
    const cpuMs = () => {
      const out: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) {
        try {
          out[name] = procStats(pid).cpuTicks * 10;
        } catch {
          // The process has ended.
        }
      }
      return out;
    };
    return { apiUrl, token, table, tableClient: (meter) => table.client(meter), drivers, accounts, spareAccounts, agentLogFiles, raw, ...(pathTraceDir === undefined ? {} : { pathTraceDir }), ...(realUnavailable === undefined ? {} : { realUnavailable }), cpuMs, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** One JSON request to the plane's API with the manager's token. */
export function apiRequest(plane: Pick<DeployedPlane, 'apiUrl' | 'token'>, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return jsonRequest(`${plane.apiUrl}${path}`, plane.token, method, body, headers);
}

/** Registers and activates every account through the API and waits until each has an agent that confirmed it. */
export async function activateAll(plane: DeployedPlane, timeoutMs = 120_000): Promise<void> {
  const names = plane.accounts.map((a) => a.name);
  const posted = await apiRequest(plane, 'POST', '/vendor/accounts', plane.accounts.map((a) => ({ name: a.name, zoneId: a.zone })));
  if (posted.status >= 300) throw new Error(`POST /vendor/accounts: ${posted.status} ${JSON.stringify(posted.json)}`);
  const patched = await apiRequest(plane, 'PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })));
  if (patched.status >= 300) throw new Error(`PATCH /vendor/accounts: ${patched.status} ${JSON.stringify(patched.json)}`);
  const end = performance.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const got = await apiRequest(plane, 'GET', `/vendor/accounts/${name}`);
      // `agents`: those that confirmed the account (docs/api.md).
      if (((got.json.agents ?? []) as unknown[]).length > 0) break;
      if (performance.now() > end) throw new Error(`account ${name} was not confirmed by an agent: ${JSON.stringify(got.json)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
