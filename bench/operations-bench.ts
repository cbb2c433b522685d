/**
 * `npm run bench:operations`: deployment operations through the whole path on loopback — the API over
 * HTTP, the table (dynalite), the driver with every module, full agents (driver connection, account
 * holder, operations worker), the test Kubernetes API server over TLS — printing one JSON line per
 * figure beside the raw server-side apply of the same manifests against the same API server, measured
 * in the same run (alternating, so both see the same machine).
 *
 * - `deploy_1_manifest`: POST of a deploy of one Deployment, then GET `?wait` until it has finished.
 *   The API and the driver share a process, as in `npm start`: the operation is stored handed out to
 *   the agent and sent at once. Baseline: one server-side apply with the agent's own cluster client.
 *   Target: p50 at most 3x the baseline. Beside it, the floor of any path with the same durable steps:
 *   two loopback HTTP requests, the operation's write (with its queue entry), the apply and the
 *   result's write, one after another, with nothing else (no API, no gRPC, no agent).
 * - `deploy_1_manifest_post_wait`: the same as one request, `POST ?wait`.
 * - `deploy_1_manifest_polled`: the same through an API instance that does not share the process with
 *   the driver: the dispatcher finds the operation by reading the queue (`operations.pollIntervalMs`).
 * - `deploy_50_manifests`: 50 ConfigMaps in one operation; baseline: the 50 applies with the agent's
 *   concurrency.
 * - `throughput_10_agents`: operations per second over 10 accounts, one agent each, with many clients
 *   at once; baseline: the same number of applies with the same concurrency, straight to the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { stringify } from 'yaml';
import { connectCluster, type ClusterClient } from '../agent/clusters/index.ts';
import { APPLY_CONCURRENCY } from '../agent/operations/deploy.ts';
import { FIELD_MANAGER } from '../agent/operations/kube.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import { DRIVER_MODULES } from '../driver/modules.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import { startApiServer, type RunningServer } from '../functions/node.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger } from '../shared/log.ts';
import { OperationEvents } from '../shared/operations/events.ts';
import { getAccount } from '../shared/table/accounts/records.ts';
import { getCacheHealth } from '../shared/table/resources/health.ts';
import { runBounded } from '../shared/table/core/bounded.ts';
import { CapacityMeter } from '../shared/table/core/capacity.ts';
import { createDocumentClient, type TableRef } from '../shared/table/core/client.ts';
import { ensureTable } from '../shared/table/core/embedded.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { percentile, ratio, round, summarize, type Series } from './stats.ts';
import { benchAgentConfig, jsonRequest, type JsonResponse } from './support.ts';

export type Line = Record<string, unknown>;

export interface OperationsBenchOptions {
  /** Rounds of both sides before anything is timed (TLS sessions, discovery, compiled code paths). */
  warmup: number;
  /** Alternating rounds of the one-manifest figures. */
  single: number;
  /** Rounds of the polled one-manifest figure. */
  polled: number;
  /** Rounds of the 50-manifest figure. */
  fifty: number;
  /** Agents (and accounts) of the throughput figure, and operations it runs, and at once. */
  agents: number;
  throughputOps: number;
  concurrency: number;
}

const AGENT_TOKEN = 'bench-operations-agent-token-0001';
const ADMIN_TOKEN = 'bench-operations-admin-token-0123456789';
const KUBE_TOKEN = 'bench-operations-kube-token-000000001';
const quiet = createLogger({ level: 'silent' });
/** The driver's default: how long an operation stored by another process may wait to be found. */
const POLL_MS = 250;

/** Capacity per table operation, to tell the dispatcher's queue reads from the work of each operation. */
class OperationMeter extends CapacityMeter {
  readonly calls = new Map<string, number>();
  override record(operation: string, consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    super.record(operation, consumed);
    this.calls.set(operation, (this.calls.get(operation) ?? 0) + 1);
  }
}

interface Plane {
  meter: OperationMeter;
  table: TableRef;
  driver: Driver;
  api: RunningServer;
  /** An API in another "process": no news to the driver. */
  remoteApi: RunningServer;
  /** A loopback HTTP server that answers every request at once: the floor of an HTTP request. */
  echo: RunningServer;
  raw: ClusterClient;
  close(): Promise<void>;
}

const account = (i: number) => `bench-${i}`;
const namespace = (i: number) => `bench-ns-${i}`;
const AGENT_MAIN = fileURLToPath(new URL('../agent/main.ts', import.meta.url));
const KUBE_MAIN = fileURLToPath(new URL('../test/kube/main.ts', import.meta.url));

/** A child process and the first line it prints. */
function child(args: string[], env: NodeJS.ProcessEnv = process.env): { process: ChildProcess; firstLine: Promise<string> } {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return { process: proc, firstLine };
}

/**
 * The table, the API server and every agent run in processes of their own, as they do in a
 * deployment (DynamoDB is a remote service, agents run in the clusters); the API and the driver share
 * this process, as in `npm start`.
 */
async function startPlane(agents: number): Promise<Plane> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-operations-'));
  const children: ChildProcess[] = [];
  const stops: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const dynalite = child(['--input-type=module', '-e', "import dynalite from 'dynalite'; const s = dynalite({ createTableMs: 0 }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));"]);
    children.push(dynalite.process);
    const meter = new OperationMeter();
    const client = createDocumentClient({ endpoint: `http://127.0.0.1:${await dynalite.firstLine}`, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, meter });
    const table: TableRef = { client, tableName: 'vendor' };
    await ensureTable(client, table.tableName);
    stops.push(async () => client.destroy());

    const kubeconfig = join(dir, 'kubeconfig');
    const kube = child([KUBE_MAIN, '--tls', '--token', KUBE_TOKEN, '--kubeconfig', kubeconfig]);
    children.push(kube.process);
    await kube.firstLine;
    const raw = await connectCluster(
      { account: 'raw', kubeConfigFile: kubeconfig, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
      { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: false, retries: { enabled: false, maxRetries: 1, backOffMs: 0, retryAnyError: false, retryableErrors: [] }, clock: systemClock, logger: quiet },
    );
    stops.push(async () => raw.close());
    for (let i = 0; i < agents; i++) {
      await raw.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace(i) } } });
    }

    // Each agent caches its account too; its cache holds Namespaces only, so the cache's writes (measured by
    // bench:cache) stay out of the operation's table calls and the deployments applied add none.
    await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, Array.from({ length: agents }, (_, i) => ({ name: account(i), kubeconfigFile: kubeconfig, kinds: ['Namespace'] })), Date.now());
    const events = new OperationEvents();
    const driver = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [AGENT_TOKEN] }, operations: { pollIntervalMs: POLL_MS } }),
      table,
      log: quiet,
      modules: DRIVER_MODULES,
      operationEvents: events,
    });
    stops.push(() => driver.close(100));
    const auth = () => createApiAuth({ adminToken: ADMIN_TOKEN, accountManagerRoles: [] }, { production: false });
    const api = await startApiServer(createApp({ table, clock: systemClock, auth: auth(), operationEvents: events }));
    stops.push(() => api.close());
    const remoteApi = await startApiServer(createApp({ table, clock: systemClock, auth: auth() }));
    stops.push(() => remoteApi.close());
    const echo = await startEcho();
    stops.push(() => echo.close());

    for (let i = 0; i < agents; i++) {
      const configPath = join(dir, `agent-${i}.yml`);
      writeFileSync(configPath, stringify(benchAgentConfig(driver.port, AGENT_TOKEN, dir, i)));
      const agent = spawn(process.execPath, [AGENT_MAIN, '--config', configPath], {
        env: { ...process.env, VENDOR_AGENT_ID: `bench-agent-${i}`, VENDOR_DEPLOYMENT_NAME: 'bench', POD_NAMESPACE: `z${i}` },
        stdio: 'ignore',
      });
      children.push(agent);
      stops.push(async () => {
        agent.kill('SIGTERM');
        await new Promise((r) => agent.once('exit', r));
      });
    }
    await until(() => driver.sessions().length === agents, 60_000, 'the agents');
    const names = Array.from({ length: agents }, (_, i) => i);
    await http(api, 'POST', '/vendor/accounts', names.map((i) => ({ name: account(i), zoneId: `bench_z${i}` })));
    await http(api, 'PATCH', '/vendor/accounts', names.map((i) => ({ name: account(i), state: 'ACTIVE' })));
    for (const i of names) {
      await untilAsync(async () => Object.values((await getAccount(table, account(i)))?.agents ?? {}).some((a) => a.ok), 60_000, `account ${account(i)}`);
      // The cache reports its first watch at once (docs/cache.md#health): that write comes before the
      // measuring starts, not inside it.
      await untilAsync(async () => {
        const kinds = (await getCacheHealth(table, account(i)))?.kinds ?? [];
        return kinds.length > 0 && kinds.every((k) => k.watching === k.scopes);
      }, 60_000, `the cache of ${account(i)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
    return { meter, table, driver, api, remoteApi, echo, raw, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Answers every request with `{}` at once, after reading its body. */
async function startEcho(): Promise<RunningServer> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function http(server: RunningServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return jsonRequest(`${server.url}${path}`, ADMIN_TOKEN, method, body, headers);
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  await untilAsync(async () => check(), timeoutMs, what);
}

async function untilAsync(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function deployment(name: string, ns: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
  };
}

function configMap(name: string, ns: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { 'settings.yaml': `name: ${name}\nreplicas: 2\n` } };
}

/** A deploy through the whole path, until the result is stored; throws unless it succeeded. */
async function operate(server: RunningServer, acct: string, manifests: Record<string, unknown>[]): Promise<void> {
  const posted = await http(server, 'POST', `/vendor/accounts/${acct}/operations`, { action: 'deploy', manifests }, { 'Idempotency-Key': randomUUID() });
  if (posted.status !== 202) throw new Error(`POST: ${posted.status} ${JSON.stringify(posted.json)}`);
  const done = await http(server, 'GET', `/vendor/operations/${String(posted.json.id)}?wait=60`);
  if (done.json.state !== 'SUCCEEDED') throw new Error(`operation ${String(posted.json.id)}: ${JSON.stringify(done.json)}`);
}

/** The same as one request: `POST ?wait`, answered with the finished operation. */
async function operateWaiting(server: RunningServer, acct: string, manifests: Record<string, unknown>[]): Promise<void> {
  const done = await http(server, 'POST', `/vendor/accounts/${acct}/operations?wait=60`, { action: 'deploy', manifests }, { 'Idempotency-Key': randomUUID() });
  if (done.status !== 200 || done.json.state !== 'SUCCEEDED') throw new Error(`POST ?wait: ${done.status} ${JSON.stringify(done.json)}`);
}

const floorItem = (i: number, what: string) => ({ pk: 'BENCHFLOOR', sk: `${i}-${what}` });

/** The operation's write as the path makes it: two conditional puts of small items at once (`items`: the operation and its queue entry). */
async function createWrite(table: TableRef, i: number, items = ['operation', 'entry']): Promise<void> {
  await Promise.all(
    items.map((what) =>
      table.client.send(new PutCommand({ TableName: table.tableName, Item: { ...floorItem(i, what), state: 'RUNNING', attempt: 1 }, ConditionExpression: 'attribute_not_exists(pk)' })),
    ),
  );
}

/** The result's write as the path makes it: a conditional update of the operation. */
async function finishWrite(table: TableRef, i: number): Promise<void> {
  await table.client.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: floorItem(i, 'operation'),
      UpdateExpression: 'SET #state = :done',
      ConditionExpression: '#state = :running',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':done': 'SUCCEEDED', ':running': 'RUNNING' },
      ReturnValues: 'ALL_NEW',
    }),
  );
}

/**
 * The floor of any path that makes the operation durable before answering and records its result:
 * an HTTP request (the POST), the operation's write, the apply, the result's write and an HTTP request
 * (the GET), one after another, each with nothing around it. Against the apply alone, the best ratio
 * such a design can reach on this machine.
 */
async function pathFloor(plane: Plane, i: number, manifest: Record<string, unknown>): Promise<void> {
  await http(plane.echo, 'POST', '/', { action: 'deploy', manifests: [manifest] });
  await createWrite(plane.table, i);
  await rawApply(plane.raw, manifest);
  await finishWrite(plane.table, i);
  await http(plane.echo, 'GET', '/');
}

/** p50 of each step of the floor on its own, `n` times each. */
async function floorParts(plane: Plane, n: number): Promise<Record<string, number>> {
  const p50 = async (step: (i: number) => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) times.push(await timed(async () => void (await step(i))));
    return round(percentile([...times].sort((a, b) => a - b), 50));
  };
  return {
    http_request: await p50(() => http(plane.echo, 'GET', '/')),
    operation_write: await p50((i) => createWrite(plane.table, n + i)),
    result_write: await p50((i) => finishWrite(plane.table, n + i)),
    // What the queue entry beside the operation costs on the path: the operation's put alone.
    operation_put_alone: await p50((i) => createWrite(plane.table, 2 * n + i, ['operation'])),
  };
}

/** One server-side apply as the agent makes it. */
export async function rawApply(client: ClusterClient, manifest: Record<string, unknown>): Promise<void> {
  const meta = manifest.metadata as { name: string; namespace: string };
  const group = String(manifest.apiVersion).includes('/') ? `/apis/${String(manifest.apiVersion)}` : `/api/${String(manifest.apiVersion)}`;
  const plural = manifest.kind === 'Deployment' ? 'deployments' : 'configmaps';
  await client.request({
    method: 'PATCH',
    path: `${group}/namespaces/${meta.namespace}/${plural}/${meta.name}`,
    query: { fieldManager: FIELD_MANAGER },
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: JSON.stringify(manifest),
  });
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Runs the path and its baseline alternately, `n` times each. */
export async function alternate(n: number, path: (i: number) => Promise<void>, raw: (i: number) => Promise<void>): Promise<[Series, Series]> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < n; i++) {
    a.push(await timed(() => path(i)));
    b.push(await timed(() => raw(i)));
  }
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return [summarize(a, sum(a)), summarize(b, sum(b))];
}

function figure(name: string, what: string, [path, raw]: [Series, Series], extra: Line = {}): Line {
  return {
    bench: 'operations',
    figure: name,
    ...path,
    baseline: { what, ...raw },
    ratio_p50: ratio(path.p50_ms, raw.p50_ms),
    ratio_p99: ratio(path.p99_ms, raw.p99_ms),
    ...extra,
  };
}

/** Table work per operation, without the dispatcher's periodic reads of the queue. */
/** Waits (10 s at most) until the table has been asked for `n` deletes in all: one per finished operation. */
async function deletesReach(meter: OperationMeter, n: number): Promise<void> {
  const end = Date.now() + 10_000;
  while ((meter.calls.get('DeleteItem') ?? 0) < n && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
}

function tableCost(meter: OperationMeter, before: { units: ReturnType<CapacityMeter['snapshot']>; calls: Map<string, number> }, ops: number): Line {
  const used = meter.since(before.units);
  const calls: Record<string, number> = {};
  for (const [op, n] of meter.calls) {
    const d = n - (before.calls.get(op) ?? 0);
    if (d > 0) calls[op] = round(d / ops);
  }
  return { table_round_trips_per_op: round(used.roundTrips / ops), table_calls_per_op: calls, rcu_per_op_with_queue_reads: round(used.readUnits / ops), wcu_per_op: round(used.writeUnits / ops) };
}

export async function runOperationsBench(options: OperationsBenchOptions, emit: (line: Line) => void): Promise<Line[]> {
  const lines: Line[] = [];
  const out = (l: Line) => {
    lines.push(l);
    emit(l);
  };
  const plane = await startPlane(options.agents);
  try {
    // Warm up both sides (TLS sessions, discovery, code paths).
    for (let i = 0; i < options.warmup; i++) {
      await operate(plane.api, account(0), [deployment(`warm-${i}`, namespace(0))]);
      await rawApply(plane.raw, deployment(`warm-raw-${i}`, namespace(0)));
    }

    // Queue entries are deleted after the answers: each figure waits for its own operations' deletes.
    await deletesReach(plane.meter, options.warmup);
    const before = { units: plane.meter.snapshot(), calls: new Map(plane.meter.calls) };
    const single = await alternate(
      options.single,
      (i) => operate(plane.api, account(0), [deployment(`one-${i}`, namespace(0))]),
      (i) => rawApply(plane.raw, deployment(`one-raw-${i}`, namespace(0))),
    );
    await deletesReach(plane.meter, options.warmup + options.single);
    const cost = tableCost(plane.meter, before, options.single);
    const floor = await alternate(
      options.single,
      (i) => pathFloor(plane, i, deployment(`floor-${i}`, namespace(0))),
      (i) => rawApply(plane.raw, deployment(`floor-raw-${i}`, namespace(0))),
    );
    const parts = await floorParts(plane, options.single);
    out(figure('deploy_1_manifest', 'one server-side apply of the same Deployment with the agent\'s cluster client', single, {
      path: 'POST (Idempotency-Key) + GET ?wait over HTTP; API and driver in one process (the operation is stored handed out to the agent)',
      ...cost,
      path_floor: {
        what: 'an HTTP request, the operation\'s write (two conditional puts at once), the apply, the result\'s conditional update and an HTTP request, one after another with nothing else: the floor of any path with these durable steps',
        p50_ms: floor[0].p50_ms,
        p99_ms: floor[0].p99_ms,
        apply_p50_ms: floor[1].p50_ms,
        ratio_p50: ratio(floor[0].p50_ms, floor[1].p50_ms),
        parts_p50_ms: parts,
      },
      // What the path costs beyond that floor (the API's own work, gRPC both ways, the agent), against the apply.
      rest_over_apply_p50: ratio(Math.max(0, single[0].p50_ms - floor[0].p50_ms), single[1].p50_ms),
    }));

    const waited = await alternate(
      options.single,
      (i) => operateWaiting(plane.api, account(0), [deployment(`waited-${i}`, namespace(0))]),
      (i) => rawApply(plane.raw, deployment(`waited-raw-${i}`, namespace(0))),
    );
    out(figure('deploy_1_manifest_post_wait', 'one server-side apply, as above', waited, {
      path: 'POST ?wait=60 (Idempotency-Key), answered with the finished operation: one HTTP request',
    }));

    const polled = await alternate(
      options.polled,
      (i) => operate(plane.remoteApi, account(0), [deployment(`polled-${i}`, namespace(0))]),
      (i) => rawApply(plane.raw, deployment(`polled-raw-${i}`, namespace(0))),
    );
    out(figure('deploy_1_manifest_polled', 'one server-side apply, as above', polled, {
      path: `API in another process: the dispatcher reads the queue every ${POLL_MS} ms; GET ?wait reads the operation again after 25, 50, 100, 200, then every 250 ms`,
      poll_interval_ms: POLL_MS,
    }));

    const fifty = await alternate(
      options.fifty,
      (i) => operate(plane.api, account(0), Array.from({ length: 50 }, (_, j) => configMap(`fifty-${i}-${j}`, namespace(0)))),
      (i) => runBounded(Array.from({ length: 50 }, (_, j) => () => rawApply(plane.raw, configMap(`fifty-raw-${i}-${j}`, namespace(0)))), APPLY_CONCURRENCY),
    );
    out(figure('deploy_50_manifests', `50 server-side applies, ${APPLY_CONCURRENCY} at a time as the agent does`, fifty));

    // Throughput: every account, many clients at once.
    const latencies: number[] = [];
    const started = performance.now();
    await runBounded(
      Array.from({ length: options.throughputOps }, (_, i) => async () => {
        latencies.push(await timed(() => operate(plane.api, account(i % options.agents), [deployment(`load-${i}`, namespace(i % options.agents))])));
      }),
      options.concurrency,
    );
    const elapsed = performance.now() - started;
    const rawStarted = performance.now();
    await runBounded(
      Array.from({ length: options.throughputOps }, (_, i) => () => rawApply(plane.raw, deployment(`load-raw-${i}`, namespace(i % options.agents)))),
      options.concurrency,
    );
    const rawElapsed = performance.now() - rawStarted;
    // What the table itself sustains with the same concurrency, against the calls an operation makes.
    const callsPerOp = Object.values(cost.table_calls_per_op as Record<string, number>).reduce((a, b) => a + b, 0);
    const tableStarted = performance.now();
    const tableCalls = Math.ceil(options.throughputOps * callsPerOp);
    await runBounded(
      Array.from({ length: tableCalls }, (_, i) => () => plane.table.client.send(new PutCommand({ TableName: plane.table.tableName, Item: { pk: 'BENCHLOAD', sk: String(i) } })).then(() => undefined)),
      options.concurrency,
    );
    const tablePerSecond = (tableCalls / (performance.now() - tableStarted)) * 1000;
    const sorted = [...latencies].sort((a, b) => a - b);
    const opsPerSecond = (options.throughputOps / elapsed) * 1000;
    const rawPerSecond = (options.throughputOps / rawElapsed) * 1000;
    out({
      bench: 'operations',
      figure: `throughput_${options.agents}_agents`,
      agents: options.agents,
      operations: options.throughputOps,
      concurrency: options.concurrency,
      ops_per_s: round(opsPerSecond),
      p50_ms: round(percentile(sorted, 50)),
      p99_ms: round(percentile(sorted, 99)),
      baseline: { what: `the same number of server-side applies, ${options.concurrency} at a time, straight to the API server`, ops_per_s: round(rawPerSecond) },
      ratio_ops_per_s: ratio(opsPerSecond, rawPerSecond),
      table_baseline: {
        what: `PutItems the table (dynalite, one process) answers per second, ${options.concurrency} at a time, and the operations per second that allows at the calls per operation of deploy_1_manifest`,
        calls_per_s: round(tablePerSecond),
        calls_per_op: round(callsPerOp),
        ops_per_s: round(tablePerSecond / callsPerOp),
      },
    });

    const ratio50 = ratio(single[0].p50_ms, single[1].p50_ms);
    const floorRatio = ratio(floor[0].p50_ms, floor[1].p50_ms);
    out({
      bench: 'operations',
      figure: 'targets',
      single_manifest_p50_ratio: ratio50,
      single_manifest_post_wait_p50_ratio: ratio(waited[0].p50_ms, waited[1].p50_ms),
      path_floor_p50_ratio: floorRatio,
      target_ratio: 3,
      single_manifest_within_3x: ratio50 !== null && ratio50 <= 3,
      path_floor_within_3x: floorRatio !== null && floorRatio <= 3,
    });
    return lines;
  } finally {
    await plane.close();
  }
}
