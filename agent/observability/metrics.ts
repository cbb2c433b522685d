import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { VERSION } from '../../shared/version.ts';

/**
 * Every metric the agent exports, defined once; components receive this object and update the
 * metrics of their concern. Names follow Prometheus conventions (`_total` counters, base units).
 */
export interface AgentMetrics {
  readonly registry: Registry;
  /** 1 while the stream to the driver is open. */
  readonly driverConnected: Gauge;
  /** Connections to the driver opened after the first one. */
  readonly driverReconnects: Counter;
  /** Accounts of this agent by state (ACTIVE, FAILED, ...). */
  readonly accounts: Gauge<'state'>;
  /** Watch events received, by account, kind and event type (ADDED, MODIFIED, DELETED, BOOKMARK). */
  readonly watchEvents: Counter<'account' | 'kind' | 'type'>;
  /** Full lists made (first sync, or after a watch could not resume), by account and kind. */
  readonly relists: Counter<'account' | 'kind'>;
  readonly cacheObjects: Gauge<'account' | 'kind'>;
  readonly cacheBytes: Gauge<'account' | 'kind'>;
  /** Scopes (namespaces, or the cluster) the cache keeps of a kind, and how many of them are watching now. */
  readonly cacheScopes: Gauge<'account' | 'kind'>;
  readonly cacheWatchingScopes: Gauge<'account' | 'kind'>;
  /** When the newest watch event of a kind arrived (Unix seconds); its age is `time() -` this. Absent before the first. */
  readonly cacheLastEvent: Gauge<'account' | 'kind'>;
  /** Operations run, by type (deploy, delete, scale, patch, rollout) and result (success, failure). */
  readonly operations: Counter<'type' | 'result'>;
  readonly operationDuration: Histogram<'type' | 'result'>;
  /** Retries, by target (`driver`: responses, `kubernetes`: API server requests) and account (empty for the driver). */
  readonly retries: Counter<'target' | 'account'>;
  /** Budget limits in force: scope `total` or `account` (0 means no limit). */
  readonly taskBudgetLimit: Gauge<'scope'>;
  /** Cost of the running tasks: `account` empty for the agent as a whole. */
  readonly taskBudgetUsed: Gauge<'account'>;
  /** Cost of the tasks waiting for budget: `account` empty for the agent as a whole. */
  readonly taskBudgetWaiting: Gauge<'account'>;
  /** Tasks by state (running, waiting) and kind. */
  readonly tasks: Gauge<'state' | 'kind'>;
  /**
   * `fill` sets the four task gauges above when they are read (a scrape), so that the budget does not
   * set them on every task's start and end; a later call replaces it.
   */
  fillTaskGaugesOnRead(fill: () => void): void;
  /** Configuration reloads by result (applied, rejected). */
  readonly configReloads: Counter<'result'>;
}

export function createAgentMetrics(registry = new Registry()): AgentMetrics {
  const registers = [registry];
  let fillTaskGauges: (() => void) | undefined;
  const collect = () => fillTaskGauges?.();
  collectDefaultMetrics({ register: registry });
  new Gauge({ name: 'vendor_agent_build_info', help: 'Always 1; the version of the running agent', labelNames: ['version'], registers }).set({ version: VERSION }, 1);
  return {
    registry,
    driverConnected: new Gauge({ name: 'vendor_agent_driver_connected', help: '1 while the stream to the driver is open', registers }),
    driverReconnects: new Counter({ name: 'vendor_agent_driver_reconnects_total', help: 'Connections to the driver opened after the first', registers }),
    accounts: new Gauge({ name: 'vendor_agent_accounts', help: 'Accounts of this agent by state', labelNames: ['state'], registers }),
    watchEvents: new Counter({
      name: 'vendor_agent_watch_events_total',
      help: 'Watch events received',
      labelNames: ['account', 'kind', 'type'],
      registers,
    }),
    relists: new Counter({ name: 'vendor_agent_relists_total', help: 'Full lists made', labelNames: ['account', 'kind'], registers }),
    cacheObjects: new Gauge({ name: 'vendor_agent_cache_objects', help: 'Objects held in the cache', labelNames: ['account', 'kind'], registers }),
    cacheBytes: new Gauge({ name: 'vendor_agent_cache_bytes', help: 'Bytes held in the cache', labelNames: ['account', 'kind'], registers }),
    cacheScopes: new Gauge({ name: 'vendor_agent_cache_scopes', help: 'Scopes cached of a kind', labelNames: ['account', 'kind'], registers }),
    cacheWatchingScopes: new Gauge({ name: 'vendor_agent_cache_watching_scopes', help: 'Scopes of a kind whose watch is open', labelNames: ['account', 'kind'], registers }),
    cacheLastEvent: new Gauge({
      name: 'vendor_agent_cache_last_event_timestamp_seconds',
      help: 'When the newest watch event of a kind arrived',
      labelNames: ['account', 'kind'],
      registers,
    }),
    operations: new Counter({ name: 'vendor_agent_operations_total', help: 'Operations run', labelNames: ['type', 'result'], registers }),
    operationDuration: new Histogram({
      name: 'vendor_agent_operation_duration_seconds',
      help: 'Duration of operations',
      labelNames: ['type', 'result'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    retries: new Counter({ name: 'vendor_agent_retries_total', help: 'Retried requests', labelNames: ['target', 'account'], registers }),
    taskBudgetLimit: new Gauge({ name: 'vendor_agent_task_budget_limit', help: 'Task budget in force, 0 for none', labelNames: ['scope'], registers, collect }),
    taskBudgetUsed: new Gauge({ name: 'vendor_agent_task_budget_used', help: 'Cost of running tasks', labelNames: ['account'], registers, collect }),
    taskBudgetWaiting: new Gauge({ name: 'vendor_agent_task_budget_waiting', help: 'Cost of tasks waiting for budget', labelNames: ['account'], registers, collect }),
    tasks: new Gauge({ name: 'vendor_agent_tasks', help: 'Tasks by state and kind', labelNames: ['state', 'kind'], registers, collect }),
    fillTaskGaugesOnRead: (fill) => {
      fillTaskGauges = fill;
    },
    configReloads: new Counter({ name: 'vendor_agent_config_reloads_total', help: 'Configuration reloads', labelNames: ['result'], registers }),
  };
}
