import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { AgentComponent, AgentContext, ComponentFactory } from './component.ts';
import { AGENT_COMPONENTS } from './components.ts';
import type { ConfigChange } from './config/diff.ts';
import { ConfigReloader, type SignalSource } from './config/reload.ts';
import type { AgentConfig } from './config/schema.ts';
import type { ConfigWarning } from '../shared/config-report/problems.ts';
import { driverProxy, normalizeProxyEnv } from './net/proxy.ts';
import { Readiness } from './observability/health.ts';
import { createAgentLogger } from './observability/logger.ts';
import { createAgentMetrics } from './observability/metrics.ts';
import { createSecretResolver } from './secrets/index.ts';
import { TaskBudget } from './tasks/budget.ts';
import { agentPathTraceFromEnv } from './operations/trace.ts';
import { resolveZone, type ZoneDeps } from './zone/zone.ts';

export const AGENT_ID_ENV = 'VENDOR_AGENT_ID';

export interface StartOptions {
  config: AgentConfig;
  configPath: string;
  warnings?: readonly ConfigWarning[];
  env?: NodeJS.ProcessEnv;
  hostname?: string;
  clock?: Clock;
  components?: readonly ComponentFactory[];
  /** SIGHUP source and file watching for reloads (the process and true by default). */
  signals?: SignalSource;
  watchFile?: boolean;
  inCluster?: ZoneDeps['inCluster'];
}

export interface RunningAgent {
  readonly ctx: AgentContext;
  readonly reloader: ConfigReloader;
  /** Stops every component in reverse order of start. */
  stop(): Promise<void>;
}

/** `VENDOR_AGENT_ID`, else the host name (the pod name) with a suffix unique to this process. */
export function agentIdFrom(env: NodeJS.ProcessEnv, hostname: string): string {
  return env[AGENT_ID_ENV] || `${hostname}-${randomBytes(3).toString('hex')}`;
}

export function describeMode(config: AgentConfig): string {
  const accounts = config.kubernetes.accounts;
  if (accounts.length === 0) return 'no static accounts: accounts come from the driver';
  if (accounts.length === 1 && accounts[0]!.serviceAccount) return 'agent mode: one account through the pod service account';
  return `multi-account mode: ${accounts.length} accounts`;
}

/**
 * Builds the agent from a valid configuration and starts its components. A component that cannot
 * start stops the ones started before it, and the error is thrown.
 */
export async function startAgent(options: StartOptions): Promise<RunningAgent> {
  const env = options.env ?? process.env;
  const hostname = options.hostname ?? osHostname();
  const clock = options.clock ?? systemClock;
  let config = options.config;
  const agentId = agentIdFrom(env, hostname);
  const logging = createAgentLogger(config.logging, agentId);
  const logger = logging.logger;

  logger.info({ file: options.configPath, accounts: config.kubernetes.accounts.map((a) => a.name) }, `configuration loaded, ${describeMode(config)}`);
  for (const w of options.warnings ?? []) logger.warn({ key: w.path }, w.message);

  normalizeProxyEnv(env);
  const proxy = driverProxy(config.driver);
  logger.info({ driver: config.driver.grpc, proxy: proxy.proxy ?? 'none', reason: proxy.reason }, 'driver connection route');

  const zone = await resolveZone({ env, hostname, logger, clock, ...(options.inCluster === undefined ? {} : { inCluster: options.inCluster }) });
  const metrics = createAgentMetrics();
  const readiness = new Readiness();
  readiness.set('config', () => ({ ok: true, detail: `loaded from ${options.configPath}` }));
  readiness.set('driver', () => ({ ok: false, detail: 'not connected to the driver' }));
  const budget = new TaskBudget(config.tasks, { clock, logger: logger.child({ component: 'tasks' }), metrics });
  const pathTrace = agentPathTraceFromEnv(env);
  const secrets = createSecretResolver(config.secrets, { logger: logger.child({ component: 'secrets' }), clock, env });

  const ctx: AgentContext = {
    agentId,
    zone,
    configPath: options.configPath,
    config: () => config,
    logger,
    setLogLevel: (level) => logging.setLevel(level),
    metrics,
    readiness,
    budget,
    clock,
    driverProxy: proxy,
    secrets,
    ...(pathTrace === undefined ? {} : { pathTrace }),
  };

  const controller = new AbortController();
  const started: AgentComponent[] = [];
  const stopAll = async () => {
    controller.abort();
    for (const component of started.splice(0).reverse()) {
      try {
        await component.stop();
      } catch (e) {
        logger.error({ component: component.name, err: e instanceof Error ? e.message : String(e) }, 'component did not stop cleanly');
      }
    }
    // After the components, which may still read the files written for encryptedFile: references.
    await secrets.close().catch((e: unknown) => {
      logger.error({ err: e instanceof Error ? e.message : String(e) }, 'secret files could not be removed');
    });
  };
  for (const factory of options.components ?? AGENT_COMPONENTS) {
    const component = factory(ctx);
    if (component === undefined) continue;
    try {
      await component.start(controller.signal);
    } catch (e) {
      logger.fatal({ component: component.name, err: e instanceof Error ? e.message : String(e) }, 'component could not start');
      await stopAll();
      throw e;
    }
    started.push(component);
  }

  const applyChange = async (change: ConfigChange) => {
    config = change.next;
    if (change.sections.includes('logging')) {
      logging.setLevel(change.next.logging.level);
      const { file, format } = change.previous.logging;
      if (file !== change.next.logging.file || format !== change.next.logging.format) {
        logger.warn('logging.file and logging.format take effect when the agent restarts; logging.level is applied now');
      }
    }
    if (change.sections.includes('secrets')) {
      // Replacing the resolver would delete the encryptedFile: files components are using.
      logger.warn('secrets.* take effect when the agent restarts; references are resolved with the settings it started with');
    }
    for (const component of started) await component.onConfigChange?.(change);
  };
  const reloader = new ConfigReloader({
    path: options.configPath,
    current: config,
    logger: logger.child({ component: 'config' }),
    clock,
    metrics,
    onChange: applyChange,
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    ...(options.watchFile === undefined ? {} : { watchFile: options.watchFile }),
  });
  reloader.start();
  logger.info({ zoneId: zone.zoneId }, 'agent started');

  return {
    ctx,
    reloader,
    stop: async () => {
      reloader.stop();
      await stopAll();
      logger.info('agent stopped');
    },
  };
}
