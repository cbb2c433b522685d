/**
 * Real parts for the resource cache's tests: the test Kubernetes API server, dynalite, a driver on
 * loopback with the cache handlers, and agents whose cache worker talks to that driver through a
 * real `DriverConnection`. The account item names the agent as its caching agent, as the caching
 * election does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY_SETTINGS } from '../agent/accounts/holder.ts';
import type { HeldAccountView, WorkerHost } from '../agent/accounts/account-worker.ts';
import { PodMetricsWorker } from '../agent/metrics/pod-metrics-worker.ts';
import { DriverConnection } from '../agent/connection/connection.ts';
import { connectCluster, type ClusterClient, type RetrySettings } from '../agent/clusters/index.ts';
import type { Decoder } from '../agent/resources/decoder.ts';
import { ListGate } from '../agent/resources/list-gate.ts';
import { DEFAULT_TIMING } from '../agent/resources/reflector.ts';
import { DEFAULT_CACHE_TIMING, type CacheTiming } from '../agent/resources/cache-run.ts';
import { CacheWorker } from '../agent/resources/cache-worker.ts';
import type { TaskBudget } from '../agent/tasks/budget.ts';
import { createAgentMetrics, type AgentMetrics } from '../agent/observability/metrics.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import type { CacheHandlers } from '../driver/resources/handlers.ts';
import { resourcesModuleWith } from '../driver/resources/module.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { AccountSettings__Output } from '../shared/protocol/messages.ts';
import { createAccount, getAccount, updateAccount } from '../shared/table/accounts/records.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { resourcePk } from '../shared/table/resources/keys.ts';
import { queryAll } from '../shared/table/core/query.ts';
import { captureLogger } from './capture-log.ts';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from './kube/index.ts';
import type { KubeObject } from './kube/index.ts';
import { TestTables } from './support/table.ts';

const TOKEN = 'cache-agent-token-0001';

export function accountSettings(over: Partial<AccountSettings__Output> = {}): AccountSettings__Output {
  return { ...EMPTY_SETTINGS, ...over };
}

/** Reflector and cache timing fast enough for tests on the system clock. */
export const FAST_TIMING: CacheTiming = {
  ...DEFAULT_TIMING,
  ...DEFAULT_CACHE_TIMING,
  pageSize: 50,
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  healthIntervalMs: 100,
  rediscoverDebounceMs: 50,
  refusedRetryMs: 50,
};

export const NO_RETRIES: RetrySettings = { enabled: false, maxRetries: 1, backOffMs: 1, retryAnyError: false, retryableErrors: [] };

export interface CacheAgent {
  agentId: string;
  worker: CacheWorker;
  connection: DriverConnection;
  cluster: ClusterClient;
  metrics: AgentMetrics;
  logs: ReturnType<typeof captureLogger>;
  /** The account as the worker was given it. */
  view: HeldAccountView;
  /** Stops the worker and the connection, as an agent process ending. */
  stop(): Promise<void>;
}

export interface AgentOptions {
  agentId?: string;
  settings?: Partial<AccountSettings__Output>;
  epoch?: number;
  timing?: Partial<CacheTiming>;
  clock?: Clock;
  random?: () => number;
  retries?: RetrySettings;
  lists?: ListGate;
  /** The agent's task budget (`tasks.*`); none by default. */
  budget?: TaskBudget;
  batch?: { maxChanges?: number; window?: number; maxSyncKeys?: number };
  /** Where the cache decodes (on the test's thread by default). */
  decoder?: Decoder;
  /** Resource events go out only once this resolves, as to a driver that holds back its acknowledgements. */
  hold?: Promise<void>;
  /** With `settings.metrics`: the clock of pod metrics readings (the agent's clock by default). */
  metricsClock?: Clock;
  /** The API server the account points at (the fixture's by default). */
  kube?: TestApiServer;
}

/** `Kind.group|namespace/name` → resourceVersion. */
export type ObjectVersions = Map<string, string>;

export class CacheFixture {
  readonly account = 'prod';
  kube!: TestApiServer;
  table!: TableRef;
  driver!: Driver;
  cache!: CacheHandlers;
  readonly driverLogs = captureLogger();
  readonly #tables = new TestTables();
  readonly #cleanups: (() => unknown)[] = [];
  #dir = '';
  #kubeconfigs = 0;

  async start(kube: TestApiServerOptions = {}): Promise<this> {
    this.#dir = await mkdtemp(join(tmpdir(), 'cache-'));
    this.kube = await startTestApiServer({ tls: true, ...kube });
    await this.#tables.start();
    this.table = await this.#tables.fresh();
    await createAccount(this.table, this.account, 1);
    await this.setCaching('agent-1', 1);
    this.driver = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
      table: this.table,
      log: this.driverLogs.log,
      modules: [resourcesModuleWith({ gateTtlMs: 0, writer: { progressIntervalMs: 0, retryMs: 20 } }, (cache) => (this.cache = cache))],
    });
    return this;
  }

  get meter() {
    return this.#tables.meter;
  }

  /** Writes the caching role into the account item, as the caching election does. */
  async setCaching(agentId: string, epoch: number): Promise<void> {
    const item = await getAccount(this.table, this.account, { consistent: true });
    await updateAccount(this.table, this.account, item!.version, { cachingAgentId: agentId, cachingEpoch: epoch }, 2);
  }

  async agent(options: AgentOptions = {}): Promise<CacheAgent> {
    const agentId = options.agentId ?? 'agent-1';
    const logs = captureLogger();
    const clock = options.clock ?? systemClock;
    const kubeconfig = (options.kube ?? this.kube).writeKubeconfig(join(this.#dir, `${agentId}-${++this.#kubeconfigs}.kubeconfig`));
    const cluster = await connectCluster(
      { account: this.account, kubeConfigFile: kubeconfig, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
      { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: false, retries: options.retries ?? NO_RETRIES, clock, logger: logs.log },
    );
    let worker: CacheWorker | undefined;
    let metricsWorker: PodMetricsWorker | undefined;
    const connection = new DriverConnection({
      settings: { driver: { grpc: `127.0.0.1:${this.driver.port}`, insecure: true, auth: { token: TOKEN }, responseRetries: { backOffMs: 50 } }, kubernetes: { reconnectTimeoutMs: 50 } },
      hello: () => ({ agentId, zone: 'vendor-agent_infra', agentVersion: '0.1.0', staticAccounts: [], heldAccounts: [] }),
      onWork: (w) => worker?.handle(w),
      onState: (s) => {
        if (s.connected) {
          worker?.connected();
          metricsWorker?.connected();
        }
      },
      log: logs.log,
      clock: systemClock,
      random: () => 0.5,
    });
    const stopConnection = new AbortController();
    const running = connection.start(stopConnection.signal);
    const host: WorkerHost = {
      respond: async (body) => {
        if (body.kind === 'resourceEvents') await options.hold;
        return connection.respond(body);
      },
      notify: (body) => connection.notify(body),
      connected: () => connection.sessionId !== undefined,
    };
    const metrics = createAgentMetrics();
    const view: HeldAccountView = {
      name: this.account,
      generation: 1,
      settings: accountSettings(options.settings),
      caching: true,
      cachingEpoch: options.epoch ?? 1,
      cluster,
      logger: logs.log,
    };
    if (view.settings.metrics) {
      metricsWorker = new PodMetricsWorker(view, host, { clock: options.metricsClock ?? clock, ...(options.budget === undefined ? {} : { budget: options.budget }) });
    }
    worker = new CacheWorker(
      view,
      host,
      {
        clock,
        random: options.random ?? (() => 0.5),
        lists: options.lists ?? new ListGate(4),
        ...(options.budget === undefined ? {} : { budget: options.budget }),
        metrics,
        timing: { ...FAST_TIMING, ...options.timing },
        ...(options.batch === undefined ? {} : { batch: options.batch }),
        ...(options.decoder === undefined ? {} : { decoder: options.decoder }),
      },
    );
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await metricsWorker?.stop();
      await worker!.stop();
      stopConnection.abort();
      await running;
      cluster.close();
    };
    this.#cleanups.push(stop);
    return { agentId, worker, connection, cluster, metrics, logs, view, stop };
  }

  /** What the table holds for the account: `Kind.group|namespace/name` → resourceVersion. */
  async tableObjects(): Promise<ObjectVersions> {
    const items = await queryAll(this.table, {
      TableName: this.table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': resourcePk(this.account) },
    });
    const out: ObjectVersions = new Map();
    for (const i of items) {
      const o = JSON.parse(i.o as string) as { apiVersion: string; kind: string };
      const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
      out.set(`${group === '' ? o.kind : `${o.kind}.${group}`}|${i.ns ? `${i.ns as string}/` : ''}${i.name as string}`, i.rv as string);
    }
    return out;
  }

  /** The compact objects the table holds, by the same key. */
  async tableCompact(): Promise<Map<string, Record<string, unknown>>> {
    const items = await queryAll(this.table, {
      TableName: this.table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': resourcePk(this.account) },
    });
    const out = new Map<string, Record<string, unknown>>();
    for (const i of items) {
      const o = JSON.parse(i.o as string) as { apiVersion: string; kind: string } & Record<string, unknown>;
      const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
      out.set(`${group === '' ? o.kind : `${o.kind}.${group}`}|${i.ns ? `${i.ns as string}/` : ''}${i.name as string}`, o);
    }
    return out;
  }

  /** What the cluster holds of `kinds` (in `namespaces`, when given), keyed like `tableObjects`. */
  clusterObjects(kinds: readonly { apiVersion: string; kind: string }[], namespaces?: readonly string[], kube: TestApiServer = this.kube): ObjectVersions {
    const out: ObjectVersions = new Map();
    for (const k of kinds) {
      const group = k.apiVersion.includes('/') ? k.apiVersion.split('/')[0] : '';
      for (const o of kube.store.list({ apiVersion: k.apiVersion, kind: k.kind }) as KubeObject[]) {
        const ns = o.metadata.namespace ?? '';
        if (namespaces !== undefined && ns !== '' && !namespaces.includes(ns)) continue;
        out.set(`${group === '' ? k.kind : `${k.kind}.${group}`}|${ns ? `${ns}/` : ''}${o.metadata.name ?? ''}`, o.metadata.resourceVersion ?? '');
      }
    }
    return out;
  }

  /** Waits until the driver has written everything it took. */
  async written(): Promise<void> {
    await this.cache.writer(this.account)?.idle();
  }

  async close(): Promise<void> {
    for (const c of this.#cleanups.splice(0).reverse()) await c();
    // Ends the streams, then stops the cache module, which writes what it holds.
    await this.driver?.close(50);
    await this.kube?.close();
    await this.#tables.close();
    if (this.#dir !== '') await rm(this.#dir, { recursive: true, force: true });
  }
}

/** Every kind the test API server serves out of the box. */
export const BUILT_IN_KINDS: readonly { apiVersion: string; kind: string }[] = [
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'Node' },
  { apiVersion: 'v1', kind: 'Event' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'batch/v1', kind: 'Job' },
  { apiVersion: 'batch/v1', kind: 'CronJob' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
];

export function configMap(ns: string, name: string, data: Record<string, string> = { a: '1' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

export function pod(ns: string, name: string, image = 'nginx:1') {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } };
}

/** A CRD of `example.com` (`Widget`/`widgets` by default). */
export function crd(kind: string, scope: 'Namespaced' | 'Cluster' = 'Namespaced') {
  const singular = kind.toLowerCase();
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${singular}s.example.com` },
    spec: {
      group: 'example.com',
      scope,
      names: { plural: `${singular}s`, singular, kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

export const WAIT = { timeout: 20_000, interval: 50 } as const;

/** Requests that listed `resource`: a LIST, or a WatchList (a watch asking for initial events). */
export function listsOf(kube: TestApiServer, resource?: string): number {
  return kube.requests
    .log()
    .filter((r) => (resource === undefined || r.resource === resource) && (r.verb === 'list' || (r.verb === 'watch' && r.query.includes('sendInitialEvents=true'))))
    .length;
}
