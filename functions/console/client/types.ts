/**
 * The shapes of the API answers the console reads (docs/api.md), taken from the server's own
 * definitions of them: the schemas the API serves with and the OpenAPI document describes. Types
 * only, so none of the server's code reaches the bundle; the modules named here import only valibot
 * and plain constants, and type-check without Node's types.
 */
export type { Account as AccountJson, AccountPage as AccountPageJson } from '../../../shared/accounts/schema.ts';
export type { AccountSummary as AccountSummaryJson } from '../../../shared/answers/account-summary.ts';
export type { AgentPage as AgentPageJson, AgentView as AgentJson } from '../../../shared/answers/agents.ts';
export type { AccountOperationPage as AccountOperationPageJson, OperationView as OperationJson } from '../../../shared/answers/operations.ts';
export type {
  CacheHealthView as CacheHealthJson,
  KindHealthView as CacheKindJson,
  PodMetricsView as MetricsJson,
  ResourcePage as ResourcePageJson,
  ResourceView as ResourceJson,
} from '../../../shared/answers/resources.ts';
export type { CallerView as CallerJson } from '../caller-view.ts';
