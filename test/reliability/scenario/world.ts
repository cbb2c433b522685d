/**
 * The whole system on loopback, each part as it runs in production: driver replicas and agents in
 * processes of their own (`node driver/main.ts`, `node agent/main.ts`) behind a TCP balancer, the
 * management API over real HTTP, the embedded table, and the test Kubernetes API server (TLS, a
 * bearer token) that every account's kubeconfig points at. The world reads every line every process
 * writes, and keeps what the scenario checks against: what each agent says it holds (its `account
 * held` / `caching role changed` / `account no longer held` lines), which operations each driver
 * says it finished, errors, and any secret found in a line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { stringify } from 'yaml';
import { createApp } from '../../../functions/app.ts';
import { startApiServer, type RunningServer } from '../../../functions/node.ts';
import { WakeSender } from '../../../functions/wake/sender.ts';
import { systemClock } from '../../../shared/clock.ts';
import type { TableRef } from '../../../shared/table/core/client.ts';
import { startTestApiServer, type TestApiServer } from '../../kube/index.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from '../../support/api.ts';
import { secretScanner, type SecretFinding, type SecretScanner } from '../../support/secret-scanner.ts';
import { startBenchTable, type BenchTable, type TablePlacement } from '../../../bench/support.ts';
import { startTcpBalancer, type TcpBalancer } from '../../support/tcp-balancer.ts';
import { ManagedProcess, type OutputLine } from './processes.ts';
import { tableProcessEnv } from '../../support/table-env.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export const AGENT_TOKEN = 'scenario-agent-token-0123456789';
export const KUBE_TOKEN = 'scenario-kube-token-0123456789abcdef';

/** Timing of the drivers: short enough for a test, with every rule of production. */
/** Signs the wakes of a world with wakes on; the drivers take it from their environment. */
const SCENARIO_WAKE_SECRET = 'scenario-wake-secret-0123456789abcdef';

export const DRIVER_TIMING = {
  sessions: { heartbeatIntervalMs: 500, leaseMs: 4_000 },
  assignment: { pollIntervalMs: 100, sweepIntervalMs: 500, handoverGraceMs: 2_000, fullReconcileIntervalMs: 10_000, clockSkewMs: 2_000 },
  operations: { pollIntervalMs: 200, redispatchAfterMs: 1_000, orphanAfterMs: 5_000 },
};

export interface Holding {
  caching: boolean;
  cachingEpoch: number;
  generation: number;
}

export interface AgentSpec {
  id: string;
  /** `<deployment>_<namespace>`. */
  zone: string;
}

export interface ApiAnswer {
  status: number;
  json: Record<string, unknown>;
}

export class ScenarioWorld {
  readonly dir = mkdtempSync(join(tmpdir(), 'scenario-'));
  /** The embedded table: in this process, or in one of its own (so its memory is counted apart). */
  store!: BenchTable;
  table!: TableRef;
  kube!: TestApiServer;
  api!: RunningServer;
  balancer!: TcpBalancer;
  readonly drivers = new Map<string, ManagedProcess>();
  readonly agents = new Map<string, ManagedProcess>();
  readonly agentZones = new Map<string, string>();
  /** Agent id → account → what its current process says it holds. */
  readonly holdings = new Map<string, Map<string, Holding>>();
  /** Operation id → lines saying a driver finished it (`operation finished`, or a timeout). */
  readonly finishedLines = new Map<string, number>();
  /** Error lines (level error or fatal) by process kind (`driver`, `agent`, `api`). */
  readonly errors = new Map<string, number>();
  readonly errorSamples: string[] = [];
  readonly secretFindings: (SecretFinding & { where: string })[] = [];
  /** Lines and answers scanned for secrets. */
  scanned = 0;
  scanner!: SecretScanner;
  /** Every process's gRPC port, once it said it listens. */
  readonly #driverPorts = new Map<string, number>();
  readonly #listening = new Map<string, () => void>();
  #wakes = false;
  #wakeSender: WakeSender | undefined;
  readonly #welcomed = new Map<string, () => void>();
  #accounts: string[] = [];
  #kubeconfig = '';

  /** Starts the table, the cluster, the API and the balancer; drivers and agents come next. */
  async start(accounts: readonly string[], table: TablePlacement = 'inline', wakes = false): Promise<void> {
    this.#accounts = [...accounts];
    this.#wakes = wakes;
    this.store = await startBenchTable(table);
    this.table = this.store.client();
    this.kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: { username: 'agent', groups: ['system:masters'] } } }, requestLogSize: 50_000 });
    this.#kubeconfig = this.kube.kubeconfigYaml({ token: KUBE_TOKEN });
    this.scanner = secretScanner({ 'agent token': AGENT_TOKEN, 'kube token': KUBE_TOKEN, 'admin token': TEST_ADMIN_TOKEN, 'wake secret': SCENARIO_WAKE_SECRET, kubeconfig: this.#kubeconfig });
    const apiLog = pino({ level: 'info', base: {} }, { write: (chunk: string) => this.#line({ source: 'api', stream: 'stdout', text: chunk.trim(), record: JSON.parse(chunk) as Record<string, unknown> }) });
    this.#wakeSender = wakes ? new WakeSender({ table: this.table, clock: systemClock, log: apiLog, secret: SCENARIO_WAKE_SECRET }) : undefined;
    const app = createApp({ table: this.table, auth: adminTokenAuth(), logger: apiLog, ...(this.#wakeSender === undefined ? {} : { wakes: this.#wakeSender }) });
    this.api = await startApiServer(app);
    this.balancer = await startTcpBalancer([]);
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.kill()));
    await Promise.all([...this.drivers.values()].map((d) => d.kill()));
    await this.balancer?.close();
    await this.api?.close();
    this.#wakeSender?.close();
    await this.kube?.close();
    await this.store?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A kubeconfig file for the test cluster, as an operator would register it. */
  kubeconfigFile(name: string): string {
    const path = join(this.dir, `${name}.kubeconfig`);
    writeFileSync(path, this.#kubeconfig, { mode: 0o600 });
    return path;
  }

  // ---- drivers ----

  addDriver(name: string): ManagedProcess {
    const path = join(this.dir, `${name}.yml`);
    writeFileSync(
      path,
      stringify({
        kubernetes: { accounts: this.#accounts.map((n) => ({ name: n })) },
        grpc: { host: '127.0.0.1' },
        auth: { tokens: [AGENT_TOKEN] },
        ...DRIVER_TIMING,
        wake: { enabled: this.#wakes, host: '127.0.0.1', port: 0 },
      }),
    );
    const proc = new ManagedProcess({
      name,
      args: ['driver/main.ts', '--config', path],
      cwd: ROOT,
      env: {
        ...process.env,
        ...tableProcessEnv({ tableName: this.table.tableName, endpoint: this.store.endpoint }),
        VENDOR_LOG_FORMAT: 'json',
        GRPC_PORT: '0',
        VENDOR_WAKE_SECRET: SCENARIO_WAKE_SECRET,
      },
      onLine: (l) => this.#line(l),
    });
    this.drivers.set(name, proc);
    return proc;
  }

  /** Starts (or starts again) a driver replica and puts it behind the balancer once it listens. */
  async startDriver(name: string): Promise<void> {
    const proc = this.drivers.get(name) ?? this.addDriver(name);
    const listening = new Promise<void>((resolve) => this.#listening.set(name, resolve));
    if (!proc.start()) return;
    // Killed before it listened: this start is over.
    await Promise.race([listening, proc.exited]);
  }

  async killDriver(name: string): Promise<void> {
    this.#driverPorts.delete(name);
    this.#syncBalancer();
    await this.drivers.get(name)?.kill();
  }

  #syncBalancer(): void {
    this.balancer.backends = [...this.#driverPorts.values()];
  }

  // ---- agents ----

  addAgent(spec: AgentSpec): ManagedProcess {
    const [deployment, namespace] = spec.zone.split('_') as [string, string];
    const path = join(this.dir, `${spec.id}.yml`);
    writeFileSync(
      path,
      stringify({
        driver: { grpc: `127.0.0.1:${this.balancer.port}`, insecure: true, auth: { token: AGENT_TOKEN }, responseRetries: { backOffMs: 200 } },
        kubernetes: { reconnectTimeoutMs: 200, retries: { enabled: true, maxRetries: 3, backOffMs: 100 }, assignedAccounts: { kubeconfigDirs: [this.dir] }, accounts: [] },
        server: { host: '127.0.0.1', port: 0 },
        logging: { format: 'json', level: 'info' },
      }),
    );
    const proc = new ManagedProcess({
      name: spec.id,
      args: ['agent/main.ts', '--config', path],
      cwd: ROOT,
      env: { ...process.env, VENDOR_AGENT_ID: spec.id, VENDOR_DEPLOYMENT_NAME: deployment, POD_NAMESPACE: namespace },
      onLine: (l) => this.#line(l),
    });
    this.agents.set(spec.id, proc);
    this.agentZones.set(spec.id, spec.zone);
    return proc;
  }

  /** Starts (or starts again) an agent; resolves once it has been welcomed by a driver. */
  async startAgent(id: string): Promise<void> {
    const proc = this.agents.get(id);
    if (proc === undefined) throw new Error(`no agent ${id}`);
    if (proc.running) return;
    this.holdings.set(id, new Map());
    const welcomed = new Promise<void>((resolve) => this.#welcomed.set(id, resolve));
    proc.start();
    await Promise.race([welcomed, proc.exited]);
  }

  async killAgent(id: string): Promise<void> {
    await this.agents.get(id)?.kill();
    this.holdings.set(id, new Map());
  }

  /** Agents running now, in `zone` when given. */
  liveAgents(zone?: string): string[] {
    return [...this.agents].filter(([id, p]) => p.running && (zone === undefined || this.agentZones.get(id) === zone)).map(([id]) => id);
  }

  // ---- the API ----

  /** A call to the management API over HTTP; every answer is scanned for secrets. */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const res = await fetch(`${this.api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    this.#scan(`API ${method} ${path} (${res.status})`, `${text}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`);
    return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  /** Scans text the scenario produced itself (an error it is about to report, say). */
  scan(where: string, text: string): void {
    this.#scan(where, text);
  }

  #scan(where: string, text: string): void {
    this.scanned++;
    for (const f of this.scanner.check(text)) this.secretFindings.push({ ...f, where });
  }

  // ---- reading the processes ----

  #line(l: OutputLine): void {
    this.#scan(`${l.source} ${l.stream}`, l.text);
    const name = l.source.split('#')[0] as string;
    const kind = l.source === 'api' ? 'api' : this.drivers.has(name) ? 'driver' : 'agent';
    const r = l.record;
    if (r === undefined) {
      // Node's own warnings and crashes go to stderr unformatted.
      if (l.stream === 'stderr' && l.text.trim() !== '') this.#error(kind, `${l.source}: ${l.text}`);
      return;
    }
    if (r.level === 'error' || r.level === 'fatal' || (typeof r.level === 'number' && r.level >= 50)) this.#error(kind, `${l.source}: ${l.text}`);
    const msg = String(r.msg ?? '');
    if (kind === 'driver') {
      if (msg === 'driver listening' && typeof r.port === 'number') {
        this.#driverPorts.set(name, r.port);
        this.#syncBalancer();
        this.#listening.get(name)?.();
      }
      const id = r.operationId;
      if (typeof id === 'string' && (msg === 'operation finished' || msg.startsWith('timed out after'))) this.finishedLines.set(id, (this.finishedLines.get(id) ?? 0) + 1);
      return;
    }
    if (kind !== 'agent') return;
    if (msg === 'connected to the driver') this.#welcomed.get(name)?.();
    const account = r.account;
    if (typeof account !== 'string') return;
    const held = this.holdings.get(name) ?? new Map<string, Holding>();
    this.holdings.set(name, held);
    if (msg === 'account held') held.set(account, { caching: r.caching === true, cachingEpoch: Number(r.cachingEpoch ?? 0), generation: Number(r.generation ?? 0) });
    else if (msg === 'caching role changed') {
      const h = held.get(account);
      if (h !== undefined) held.set(account, { ...h, caching: r.caching === true, cachingEpoch: Number(r.cachingEpoch ?? 0) });
    } else if (msg.startsWith('account no longer held')) held.delete(account);
  }

  #error(kind: string, sample: string): void {
    this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    if (this.errorSamples.length < 50) this.errorSamples.push(sample.slice(0, 1_000));
  }

  /** Process ids now, by name (the harness itself as `harness`). */
  pids(): Record<string, number> {
    const out: Record<string, number> = { harness: process.pid };
    if (this.store.pid !== undefined) out.table = this.store.pid;
    for (const [name, p] of [...this.drivers, ...this.agents]) if (p.pid !== undefined) out[name] = p.pid;
    return out;
  }

  /** The kubeconfig written for accounts, to check nothing printed it. */
  get kubeconfigText(): string {
    return this.#kubeconfig;
  }
}
