/**
 * The accounts feature end to end on loopback, for the end-to-end suites: a dynalite table, the
 * management API (through `app.request()`), driver replicas with every module, real agents (the
 * driver connection and the account holder of `agent/`) and a test Kubernetes API server over TLS
 * whose token the kubeconfig files carry.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { stringify } from 'yaml';
import { accountHolderWith } from '../../agent/accounts/component.ts';
import type { AccountWorkerFactory } from '../../agent/accounts/account-worker.ts';
import { ACCOUNT_WORKERS } from '../../agent/accounts/workers.ts';
import { startAgent, type RunningAgent } from '../../agent/agent.ts';
import { budgetComponent } from '../../agent/tasks/component.ts';
import { driverConnectionComponent } from '../../agent/connection/component.ts';
import { driverLink } from '../../agent/connection/link.ts';
import { parseConfig } from '../../agent/config/load.ts';
import type { AccountHolder } from '../../agent/accounts/holder.ts';
import { FLEET_IDENTITY, type AgentAuthenticator } from '../../driver/auth.ts';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import { startDriver, type Driver } from '../../driver/server.ts';
import { createApp } from '../../functions/app.ts';
import type { ApiEnv } from '../../functions/auth/caller.ts';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import type { AgentIdentity } from '../../shared/agents/identity.ts';
import { systemClock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { AUTHORIZATION_HEADER, bearerToken } from '../../shared/protocol/wire.ts';
import { OperationEvents } from '../../shared/operations/events.ts';
import { getAccount, getAccounts } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { captureLogger } from '../capture-log.ts';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from '../kube/index.ts';
import { TEST_ADMIN_TOKEN, adminTokenAuth } from './api.ts';
import { TestTables } from './table.ts';

export const AGENT_TOKEN = 'assignment-agent-token-0001';
export const KUBE_TOKEN = 'assignment-kube-token-000000000001';

/** Timing small enough for tests; every bound still holds as documented, only shorter. */
export const FAST_ASSIGNMENT = { pollIntervalMs: 25, sweepIntervalMs: 50, handoverGraceMs: 400, fullReconcileIntervalMs: 60_000, clockSkewMs: 2_000 };
export const FAST_OPERATIONS = { pollIntervalMs: 100, redispatchAfterMs: 200, orphanAfterMs: 1_000, timeoutMs: 3_900_000 };

export interface TestAgentOptions {
  /** `<deploymentName>_<namespace>` is the zone. */
  deployment?: string;
  namespace?: string;
  /** The driver address (`host:port`). */
  target: string;
  /** `kubernetes.accounts[]` of the agent's own file. */
  accounts?: Record<string, unknown>[];
  /** `tasks.*` of the agent's own file. */
  tasks?: Record<string, unknown>;
  /** Worker factories instead of the agent's own. */
  workers?: readonly AccountWorkerFactory[];
  /** `kubernetes.reconnectTimeoutMs` (50 by default). */
  reconnectTimeoutMs?: number;
  /** `kubernetes.assignedAccounts`; by default the world's folder, where `kubeconfig()` writes. */
  assignedAccounts?: Record<string, unknown>;
  /** The agent's token (`AGENT_TOKEN`, the fleet's, by default). */
  token?: string;
  /** More of the agent's environment (e.g. `VENDOR_PATH_TRACE`). */
  env?: Record<string, string>;
}

export interface TestAgent {
  readonly id: string;
  readonly running: RunningAgent;
  holder(): AccountHolder;
  logs(): Record<string, unknown>[];
  stop(): Promise<void>;
}

export class AccountsWorld {
  readonly dir = mkdtempSync(join(tmpdir(), 'assignment-'));
  readonly tables = new TestTables();
  kube!: TestApiServer;
  table!: TableRef;
  app!: Hono<ApiEnv>;
  readonly driverLogs = captureLogger();
  readonly #cleanups: (() => unknown)[] = [];

  /** Operation news shared by the API and the drivers of this world, as in one `npm start` process. */
  operationEvents = new OperationEvents();

  async start(kube: TestApiServerOptions = {}): Promise<void> {
    await this.tables.start();
    this.kube = await startTestApiServer({ ...kube, tls: true, auth: { tokens: { [KUBE_TOKEN]: { username: 'agent', groups: ['system:masters'] } } } });
    // An agent loads the cluster client with its first account, which holds this process's event loop
    // for a while (the driver's heartbeats too); loaded now, that never eats into a test's leases.
    await import('../../agent/clusters/index.ts');
  }

  async close(): Promise<void> {
    await this.reset();
    await this.kube.close();
    await this.tables.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A fresh table and API, with these driver-defined accounts. */
  async fresh(driverAccounts: AccountSettings[]): Promise<void> {
    this.table = await this.tables.fresh();
    this.operationEvents = new OperationEvents();
    this.app = createApp({ table: this.table, clock: systemClock, auth: adminTokenAuth(), operationEvents: this.operationEvents });
    await syncSource(this.table, { id: 'driver-config', kind: 'driver-config' }, driverAccounts, Date.now());
  }

  /** Has the next reset stop `cleanup` too, in the reverse order of everything started (agents first). */
  onReset(cleanup: () => unknown): void {
    this.#cleanups.push(cleanup);
  }

  /** Stops every agent and driver started since the last reset (agents first). */
  async reset(): Promise<void> {
    for (const c of this.#cleanups.splice(0).reverse()) await c();
  }

  /** Writes a kubeconfig for the test API server; `token` defaults to the accepted one. */
  kubeconfig(name: string, options: { token?: string; context?: string } = {}): string {
    const path = join(this.dir, `${name}.kubeconfig`);
    this.kube.writeKubeconfig(path, { token: options.token ?? KUBE_TOKEN, ...(options.context === undefined ? {} : { name: options.context }) });
    return path;
  }

  async driver(
    options: {
      port?: number;
      assignment?: Partial<typeof FAST_ASSIGNMENT>;
      operations?: Partial<typeof FAST_OPERATIONS>;
      replicaId?: string;
      /** More of the `grpc` section (message size, keepalive). */
      grpc?: Record<string, unknown>;
      /** Another client of the world's table (behind a fault layer, say). */
      table?: TableRef;
      /**
       * Lease and heartbeat settings. By default heartbeats every 200 ms and a 5 s lease: an agent that
       * goes silent is noticed within seconds, and a loaded machine that stalls a process for a second
       * does not end its streams.
       */
      sessions?: { heartbeatIntervalMs: number; leaseMs: number };
      /** Modules besides `base` (every production module by default). */
      modules?: readonly DriverModuleFactory[];
      base?: readonly DriverModuleFactory[];
      /** Who each stream's credential speaks for (`identityTokens()`); the fleet token's by default. */
      authenticate?: AgentAuthenticator;
    } = {},
  ): Promise<Driver> {
    const driver = await startDriver({
      config: parseDriverGrpcConfig({
        grpc: { host: '127.0.0.1', port: options.port ?? 0, ...options.grpc },
        auth: { tokens: [AGENT_TOKEN] },
        sessions: options.sessions ?? { heartbeatIntervalMs: 200, leaseMs: 5_000 },
        assignment: { ...FAST_ASSIGNMENT, ...options.assignment },
        operations: { ...FAST_OPERATIONS, ...options.operations },
      }),
      table: options.table ?? this.table,
      log: this.driverLogs.log,
      modules: [...(options.base ?? DRIVER_MODULES), ...(options.modules ?? [])],
      operationEvents: this.operationEvents,
      ...(options.replicaId === undefined ? {} : { replicaId: options.replicaId }),
      ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
    });
    this.#cleanups.push(() => driver.close(100));
    return driver;
  }

  async agent(id: string, options: TestAgentOptions): Promise<TestAgent> {
    const path = join(this.dir, `${id}.yml`);
    const logFile = join(this.dir, `${id}.log`);
    const raw = {
      driver: { grpc: options.target, insecure: true, auth: { token: options.token ?? AGENT_TOKEN } },
      kubernetes: {
        reconnectTimeoutMs: options.reconnectTimeoutMs ?? 50,
        retries: { enabled: false },
        assignedAccounts: options.assignedAccounts ?? { kubeconfigDirs: [this.dir] },
        accounts: options.accounts ?? [],
      },
      logging: { format: 'json', file: logFile, level: 'debug' },
      ...(options.tasks === undefined ? {} : { tasks: options.tasks }),
    };
    writeFileSync(path, stringify(raw));
    const parsed = parseConfig(stringify(raw), path);
    if (parsed.config === undefined) throw new Error(`bad test agent config: ${JSON.stringify(parsed.problems)}`);
    const running = await startAgent({
      config: parsed.config,
      configPath: path,
      env: { VENDOR_AGENT_ID: id, VENDOR_DEPLOYMENT_NAME: options.deployment ?? 'vendor-agent', POD_NAMESPACE: options.namespace ?? 'infra', ...options.env },
      hostname: id,
      components: [budgetComponent, driverConnectionComponent, accountHolderWith(options.workers ?? ACCOUNT_WORKERS)],
      watchFile: false,
      signals: { on: () => undefined, off: () => undefined },
      inCluster: async () => undefined,
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await running.stop();
    };
    this.#cleanups.push(stop);
    return {
      id,
      running,
      holder: () => driverLink(running.ctx)?.handler as AccountHolder,
      logs: () =>
        readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      stop,
    };
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  /** POST (with a kubeconfig for the test API server) and PATCH to ACTIVE; the PATCH must succeed. */
  async activate(name: string, zoneId?: string): Promise<void> {
    await this.call('POST', '/vendor/accounts', [{ name, kubeconfigFile: this.kubeconfig(name), ...(zoneId === undefined ? {} : { zoneId }) }]);
    const patched = await this.call('PATCH', '/vendor/accounts', [{ name, state: 'ACTIVE' }]);
    if (patched.status !== 200) throw new Error(`PATCH ${name}: ${patched.status} ${JSON.stringify(patched.json)}`);
  }

  /** The account as the API serves it. */
  async account(name: string): Promise<Record<string, unknown>> {
    return (await this.call('GET', `/vendor/accounts/${name}`)).json;
  }

  record(name: string): Promise<AccountRecord | undefined> {
    return getAccount(this.table, name, { consistent: true });
  }

  /** Those of `names` that are ACTIVE with a confirmation from `agents` agents, read consistently. */
  async confirmedBy(names: readonly string[], agents: number): Promise<AccountRecord[]> {
    const records = await getAccounts(this.table, [...names], { consistent: true });
    return [...records.values()].filter((r) => r.state === 'ACTIVE' && Object.values(r.agents).filter((e) => e.ok).length === agents);
  }
}

/**
 * An authenticator for tests: each bearer token in `identities` speaks for its identity, and
 * `AGENT_TOKEN` for the whole fleet (`FLEET_IDENTITY`), as a credential store would answer.
 */
export function identityTokens(identities: Record<string, AgentIdentity>): AgentAuthenticator {
  const byToken = new Map<string, AgentIdentity>([[AGENT_TOKEN, FLEET_IDENTITY], ...Object.entries(identities)]);
  return async (call) => {
    const header = call.metadata.get(AUTHORIZATION_HEADER)[0];
    const token = typeof header === 'string' ? bearerToken(header) : undefined;
    const identity = token === undefined ? undefined : byToken.get(token);
    if (identity === undefined) throw new VendorError('unauthenticated', 'bearer token not accepted');
    return identity;
  };
}

/** How long the suites wait for the flow to settle, and how often they look. */
export const WAIT = { timeout: 15_000, interval: 20 };

/** A world started once for a test file, reset after every test and closed at the end. */
export function useAccountsWorld(kube: TestApiServerOptions = {}): AccountsWorld {
  const world = new AccountsWorld();
  beforeAll(() => world.start(kube));
  afterAll(() => world.close());
  afterEach(() => world.reset());
  return world;
}
