/**
 * `npm run bench:assign`: the assignment flow on loopback with the real parts (dynalite, the
 * management API through `app.request()`, the driver with every module, agents), printing one JSON
 * line per figure beside a baseline measured in the same run.
 *
 * - `patch_to_active`: PATCH of one account until the driver has written the agent's confirmation,
 *   with a full agent (driver connection and account holder) that checks the cluster (GET /version
 *   on the test Kubernetes API server over TLS) before confirming. Target: p99 within the pick-up
 *   bound (`assignment.pollIntervalMs`) plus 100 ms.
 * - `activate_1000`: 1,000 accounts activated at once (two PATCH requests of 500, the API's batch
 *   limit, sent together), 100 in each of 10 zones with one agent each, until all are confirmed.
 *   The agents are protocol clients: the agent's own `DriverConnection` (a gRPC client per stream,
 *   hello, heartbeats, sequence numbers, acks, outbox) answering every assignment ok at once, so
 *   the figure is the control plane's. Target: 5 s.
 * - `idle_streams`: one driver process (`driver/main.ts`, its own RSS and CPU read from /proc)
 *   holding N idle agent streams (the same protocol clients) with heartbeats every 10 s, against
 *   the same process with no streams. Target: under 1 GiB RSS for 2,000.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pino from 'pino';
import { stringify } from 'yaml';
import { accountHolderComponent } from '../agent/accounts/component.ts';
import { startAgent } from '../agent/agent.ts';
import { parseConfig } from '../agent/config/load.ts';
import { driverConnectionComponent } from '../agent/connection/component.ts';
import { DriverConnection } from '../agent/connection/connection.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import { DRIVER_MODULES } from '../driver/modules.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import type { AccountSettings } from '../shared/accounts/schema.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger, type Logger } from '../shared/log.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/embedded.ts';
import { syncSource } from '../shared/table/sources.ts';
import { runBounded } from '../shared/table/bounded.ts';
import { startTestApiServer, type TestApiServer } from '../test/kube/index.ts';
import { percentile, ratio, round } from './stats.ts';

export type Line = Record<string, unknown>;

const TOKEN = 'bench-agent-token-000000000001';
/** The API's local admin token for the bench's requests (a manager: every account, every write). */
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef-0123';
const KUBE_TOKEN = 'bench-kube-token-0000000000000001';
const quiet = createLogger({ level: 'silent' });
/** The driver's default `assignment.pollIntervalMs`: the documented pick-up bound. */
const PICKUP_MS = 250;

/** A logger that hands each record to `on` as it is written, to time the driver's own events. */
function eventLogger(on: (record: Record<string, unknown>) => void): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') on(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info', base: {} }, sink);
}

interface Plane {
  table: EmbeddedTable;
  app: ReturnType<typeof createApp>;
  driver: Driver;
  /** Resolves when the driver has recorded an ok answer for `account`. */
  confirmed(account: string): Promise<number>;
  confirmedCount(): number;
  close(): Promise<void>;
}

async function startPlane(accounts: AccountSettings[], assignment: Record<string, number> = {}): Promise<Plane> {
  const table = await startEmbeddedTable();
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, accounts, Date.now());
  const waiting = new Map<string, (at: number) => void>();
  const done = new Set<string>();
  const log = eventLogger((r) => {
    if (r['msg'] !== 'assignment result' || r['ok'] !== true || r['outcome'] !== 'recorded') return;
    const account = String(r['account']);
    done.add(account);
    waiting.get(account)?.(performance.now());
  });
  const driver = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] }, assignment }),
    table,
    log,
    modules: DRIVER_MODULES,
  });
  return {
    table,
    app: createApp({ table, clock: systemClock, auth: createApiAuth({ adminToken: ADMIN_TOKEN, accountManagerRoles: [] }, { production: false }) }),
    driver,
    confirmed: (account) => new Promise((resolve) => waiting.set(account, resolve)),
    confirmedCount: () => done.size,
    close: async () => {
      await driver.close(100);
      await table.close();
    },
  };
}

async function call(plane: Plane, method: string, body: unknown): Promise<number> {
  const res = await plane.app.request('/vendor/accounts', {
    method,
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  await res.arrayBuffer();
  return res.status;
}

/** The agent's own connection, answering every assignment at once: a protocol client without a cluster. */
function protocolAgent(port: number, agentId: string, zone: string, signal: AbortSignal): DriverConnection {
  const connection: DriverConnection = new DriverConnection({
    settings: { driver: { grpc: `127.0.0.1:${port}`, insecure: true, auth: { token: TOKEN } }, kubernetes: { reconnectTimeoutMs: 1000 } },
    hello: () => ({ agentId, zone, agentVersion: 'bench' }),
    onWork: (w) => {
      if (w.kind === 'assignAccount') {
        void connection.respond({ kind: 'assignmentResult', body: { account: w.body.account, generation: w.body.generation, ok: true, message: 'bench' } });
      }
    },
    log: quiet,
  });
  void connection.start(signal);
  return connection;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** PATCH to ACTIVE, one account at a time, with a full agent checking the cluster. */
export async function benchPatchToActive(rounds: number, emit: (l: Line) => void): Promise<void> {
  const kube: TestApiServer = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: 'bench' } } });
  const dir = mkdtempSync(join(tmpdir(), 'bench-assign-'));
  const kubeconfig = kube.writeKubeconfig(join(dir, 'kubeconfig'), { token: KUBE_TOKEN });
  const names = Array.from({ length: rounds }, (_, i) => `acct-${String(i).padStart(4, '0')}`);
  const pollMs = PICKUP_MS;
  const plane = await startPlane(names.map((name) => ({ name, kubeconfigFile: kubeconfig })), { pollIntervalMs: pollMs });
  const configPath = join(dir, 'vendor-agent.yml');
  const raw = { driver: { grpc: `127.0.0.1:${plane.driver.port}`, insecure: true, auth: { token: TOKEN } }, logging: { level: 'warn', file: join(dir, 'agent.log') } };
  writeFileSync(configPath, stringify(raw));
  const agent = await startAgent({
    config: parseConfig(stringify(raw), configPath).config!,
    configPath,
    env: { VENDOR_AGENT_ID: 'bench-agent', VENDOR_DEPLOYMENT_NAME: 'bench', POD_NAMESPACE: 'z' },
    components: [driverConnectionComponent, accountHolderComponent],
    watchFile: false,
    signals: { on: () => undefined, off: () => undefined },
    inCluster: async () => undefined,
  });
  try {
    await until(() => plane.driver.sessions().length === 1, 10_000, 'the agent');
    await call(plane, 'POST', names.map((name) => ({ name })));
    // Baselines: one strongly consistent table read, and the agent's own cluster check (GET /version over TLS).
    const reads: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await plane.table.client.send(new GetCommand({ TableName: plane.table.tableName, Key: { pk: 'ACCOUNT', sk: names[0] }, ConsistentRead: true }));
      reads.push(performance.now() - t);
    }
    const checks: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      const res = await fetch(`${kube.url}/version`, { headers: { authorization: `Bearer ${KUBE_TOKEN}` } }).catch(() => undefined);
      await res?.arrayBuffer();
      checks.push(performance.now() - t);
    }
    const latencies: number[] = [];
    for (const name of names) {
      // PATCHes arrive at random points of the feed's read cycle, as an operator's would.
      await new Promise((r) => setTimeout(r, Math.random() * pollMs));
      const confirmed = plane.confirmed(name);
      const status = await call(plane, 'PATCH', [{ name, state: 'ACTIVE' }]);
      if (status !== 200) throw new Error(`PATCH ${name}: ${status}`);
      const patched = performance.now();
      latencies.push((await confirmed) - patched);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const p99 = percentile(sorted, 99);
    const bound = pollMs + 100;
    const readSorted = [...reads].sort((a, b) => a - b);
    emit({
      bench: 'assign',
      figure: 'patch_to_active',
      agents: 'full agent: driver connection + account holder, GET /version over TLS before confirming',
      n: sorted.length,
      p50_ms: round(percentile(sorted, 50)),
      p99_ms: round(p99),
      max_ms: round(sorted.at(-1) ?? 0),
      pickup_bound_ms: pollMs,
      target_p99_ms: bound,
      within_target: p99 <= bound,
      baseline_consistent_getitem_p50_ms: round(percentile(readSorted, 50)),
      baseline_cluster_check_p50_ms: round(percentile([...checks].sort((a, b) => a - b), 50)),
      ratio_p50_to_pickup_bound: ratio(percentile(sorted, 50), pollMs),
    });
  } finally {
    await agent.stop();
    await plane.close();
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 1,000 accounts activated at once over 10 zones of one agent each. */
export async function benchActivateMany(accounts: number, zones: number, emit: (l: Line) => void): Promise<void> {
  const names = Array.from({ length: accounts }, (_, i) => `many-${String(i).padStart(5, '0')}`);
  const plane = await startPlane(names.map((name) => ({ name, kubeconfigFile: '/k/bench' })));
  const stop = new AbortController();
  try {
    for (let z = 0; z < zones; z++) protocolAgent(plane.driver.port, `agent-${z}`, `bench_z${z}`, stop.signal);
    await until(() => plane.driver.sessions().length === zones, 20_000, 'the agents');
    for (let i = 0; i < names.length; i += 500) {
      const status = await call(plane, 'POST', names.slice(i, i + 500).map((name, j) => ({ name, zoneId: `bench_z${(i + j) % zones}` })));
      if (status !== 200) throw new Error(`POST: ${status}`);
    }
    const started = performance.now();
    const patches = [];
    for (let i = 0; i < names.length; i += 500) patches.push(call(plane, 'PATCH', names.slice(i, i + 500).map((name) => ({ name, state: 'ACTIVE' }))));
    const statuses = await Promise.all(patches);
    if (statuses.some((s) => s !== 200)) throw new Error(`PATCH: ${statuses.join(', ')}`);
    const patched = performance.now() - started;
    await until(() => plane.confirmedCount() >= accounts, 120_000, 'every confirmation');
    const total = performance.now() - started;

    // Baseline: the table writes the flow cannot do without (the API's PATCH write and feed entry,
    // the driver's hand-out and the recorded answer), as plain conditional updates at the same concurrency.
    const scratch = Array.from({ length: accounts }, (_, i) => i);
    const rawStart = performance.now();
    await runBounded(
      scratch.flatMap((i) =>
        Array.from({ length: 3 }, () => async () => {
          await plane.table.client.send(
            new UpdateCommand({
              TableName: plane.table.tableName,
              Key: { pk: 'BENCH', sk: String(i) },
              UpdateExpression: 'SET v = if_not_exists(v, :zero) + :one',
              ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
            }),
          );
        }),
      ),
      16,
    );
    const raw = performance.now() - rawStart;
    emit({
      bench: 'assign',
      figure: 'activate_1000',
      agents: `${zones} protocol clients (agent DriverConnection answering at once), one per zone`,
      accounts,
      patch_requests: statuses.length,
      patch_ms: round(patched),
      all_active_ms: round(total),
      all_active_after_patch_answered_ms: round(total - patched),
      target_ms: 5000,
      within_target: total <= 5000,
      within_target_after_patch_answered: total - patched <= 5000,
      baseline_raw_updates: accounts * 3,
      baseline_raw_updates_ms: round(raw),
      ratio_to_baseline: ratio(total, raw),
    });
  } finally {
    stop.abort();
    await plane.close();
  }
}

interface ProcStats {
  rssBytes: number;
  cpuTicks: number;
}

function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssBytes: rssKb * 1024, cpuTicks: Number(fields[11]) + Number(fields[12]) };
}

/** CPU share of one core over a window, from /proc ticks (100 per second on Linux). */
async function sample(pid: number, windowMs: number): Promise<{ rss_mib: number; cpu_percent: number }> {
  const a = procStats(pid);
  await new Promise((r) => setTimeout(r, windowMs));
  const b = procStats(pid);
  return { rss_mib: round(b.rssBytes / 1024 / 1024, 1), cpu_percent: round(((b.cpuTicks - a.cpuTicks) / 100 / (windowMs / 1000)) * 100, 2) };
}

/** One driver process holding `streams` idle agent streams with heartbeats, against itself with none. */
export async function benchIdleStreams(streams: number, windowMs: number, emit: (l: Line) => void): Promise<void> {
  const table = await startEmbeddedTable();
  const dir = mkdtempSync(join(tmpdir(), 'bench-streams-'));
  const configPath = join(dir, 'vendor-driver.yml');
  writeFileSync(configPath, stringify({ grpc: { host: '127.0.0.1', maxMessageBytes: 4 * 1024 * 1024 }, auth: { tokens: [TOKEN] } }));
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn(process.execPath, ['driver/main.ts', '--config', configPath], {
    cwd: root,
    env: {
      ...process.env,
      VENDOR_TABLE_NAME: table.tableName,
      VENDOR_DYNAMODB_ENDPOINT: table.endpoint,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      VENDOR_LOG_FORMAT: 'json',
      GRPC_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = new AbortController();
  let welcomed = 0;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`driver exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.includes('"msg":"driver listening"')) resolve((JSON.parse(line) as { port: number }).port);
        if (line.includes('"msg":"agent session opened"')) welcomed++;
      });
    });
    const pid = child.pid as number;
    const idle = await sample(pid, windowMs);
    const rampStart = performance.now();
    const connections: DriverConnection[] = [];
    for (let i = 0; i < streams; i++) {
      connections.push(protocolAgent(port, `idle-${i}`, `bench_idle_${i % 50}`, stop.signal));
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    await until(() => welcomed >= streams, 300_000, 'every stream to be welcomed');
    const rampMs = performance.now() - rampStart;
    const held = await sample(pid, windowMs);
    const connected = connections.filter((c) => c.connected).length;
    emit({
      bench: 'assign',
      figure: 'idle_streams',
      agents: 'protocol clients (agent DriverConnection), heartbeats every 10 s (the driver default)',
      streams,
      connected,
      welcome_all_ms: round(rampMs),
      window_ms: windowMs,
      driver_rss_mib: held.rss_mib,
      driver_cpu_percent_of_one_core: held.cpu_percent,
      target_rss_mib: 1024,
      within_target: held.rss_mib < 1024 && connected === streams,
      baseline_no_streams_rss_mib: idle.rss_mib,
      baseline_no_streams_cpu_percent: idle.cpu_percent,
      rss_per_stream_kib: round(((held.rss_mib - idle.rss_mib) * 1024) / streams, 1),
    });
  } finally {
    stop.abort();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await table.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
