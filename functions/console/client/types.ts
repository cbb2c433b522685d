/**
 * The shapes of the API answers the console reads (docs/api.md), taken from the server's own
 * definitions of them: the schemas the API serves with and the OpenAPI document describes. Types
 * only, so none of the server's code reaches the bundle; the modules named here import only valibot
 * and plain constants, and type-check without Node's types.
 */
export type { Account as AccountJson, AccountPage as AccountPageJson } from '../../../shared/accounts/schema.ts';
export type { AccountSummary as AccountSummaryJson } from '../../accounts/summary-view.ts';
export type { AgentPage as AgentPageJson, AgentView as AgentJson } from '../../agents/schemas.ts';
export type { AccountOperationPage as AccountOperationPageJson, OperationView as OperationJson } from '../../operations/schemas.ts';
export type {
  CacheHealthView as CacheHealthJson,
  KindHealthView as CacheKindJson,
  PodMetricsView as MetricsJson,
  ResourcePage as ResourcePageJson,
  ResourceView as ResourceJson,
} from '../../resources/schemas.ts';
export type { CallerView as CallerJson } from '../caller-view.ts';
