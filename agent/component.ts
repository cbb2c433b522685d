import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/log.ts';
import type { ConfigChange } from './config/diff.ts';
import type { AgentConfig, LogLevel } from './config/schema.ts';
import type { ProxyDecision } from './net/proxy.ts';
import type { SecretResolver } from './secrets/index.ts';
import type { Readiness } from './observability/health.ts';
import type { AgentMetrics } from './observability/metrics.ts';
import type { TaskBudget } from './tasks/budget.ts';
import type { AgentPathTrace } from './operations/trace.ts';
import type { Zone } from './zone/zone.ts';

/** One concern of the running agent (a server, the driver connection, the cluster cache, ...). */
export interface AgentComponent {
  readonly name: string;
  /** Resolves once the component runs (a server listens, a loop is scheduled); rejects if it cannot. */
  start(signal: AbortSignal): Promise<void>;
  /** Resolves once its work is flushed and closed. */
  stop(): Promise<void>;
  /** A reloaded configuration: the component applies what concerns it (accounts, its own section). */
  onConfigChange?(change: ConfigChange): void | Promise<void>;
}

/** What every component is built from. */
export interface AgentContext {
  readonly agentId: string;
  readonly zone: Zone;
  readonly configPath: string;
  /** The configuration in force; a reload replaces it. */
  config(): AgentConfig;
  /** Root logger (carries agentId); use `accountLogger` for lines about one account. */
  readonly logger: Logger;
  setLogLevel(level: LogLevel): void;
  readonly metrics: AgentMetrics;
  /** Plug readiness probes in here; the driver connection replaces the `driver` probe. */
  readonly readiness: Readiness;
  readonly budget: TaskBudget;
  readonly clock: Clock;
  /** How the driver is reached (proxy or direct), decided once at start. */
  readonly driverProxy: ProxyDecision;
  /**
   * Resolves `encrypted:` and `encryptedFile:` references where a setting is used; built once from the
   * `secrets` section the agent started with, closed (its private files deleted) when the agent stops.
   */
  readonly secrets: SecretResolver;
  /** Set by `VENDOR_PATH_TRACE` (docs/operations.md#the-agents-part-of-the-path); undefined, as it is normally, traces nothing. */
  readonly pathTrace?: AgentPathTrace;
}

/** Builds a component from the context, or returns undefined when the configuration does not call for it. */
export type ComponentFactory = (ctx: AgentContext) => AgentComponent | undefined;
