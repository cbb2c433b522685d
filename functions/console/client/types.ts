/** The shapes of the API answers the console reads (docs/api.md). */
export interface CallerJson {
  via: 'admin-token' | 'oidc';
  subject: string;
  roles: string[];
  manager: boolean;
  accounts: { name: string; read: boolean; write: boolean }[];
}

export type AccountStateName = 'INACTIVE' | 'ACTIVE' | 'FAILED';

export interface AccountJson {
  name: string;
  type: string;
  source: 'driver' | 'static-agent-config';
  config: Record<string, unknown>;
  zoneId?: string;
  agents: { agentId: string; caching: boolean }[];
  lastAssignmentMsg: string;
  state?: AccountStateName;
  cluster?: { reachable: boolean; since: string; reason?: string; error?: string; reportedBy: string; reportedAt: string };
  permissionsIgnored?: boolean;
  permissionsIgnoredReason?: string;
}

export interface NumberedPage<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

export interface AccountSummaryJson {
  total: number;
  byState: Record<string, number>;
  withoutState: number;
  byZone: Record<string, number>;
  withoutZone: number;
  bySource: Record<string, number>;
}

export interface AgentJson {
  agentId: string;
  zoneId: string;
  identity: string;
  version: string;
  replicaId: string;
  connectedAt: string;
  lastHeartbeatAt: string;
  accounts: { name: string; caching: boolean }[];
  caching: number;
}

export interface CacheKindJson {
  kind: string;
  group: string;
  scopes: unknown;
  watching: boolean;
  objects: number;
  lastEventAgeMs: number | null;
  relists: number;
  expired: number;
  lastError: string | null;
  lastErrorAgeMs: number | null;
}

export interface CacheHealthJson {
  account: string;
  cachingAgentId: string | null;
  reportedBy: string | null;
  reportedAt: string | null;
  kinds: CacheKindJson[];
}

export interface ResourceJson {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  resourceVersion: string;
  updatedAt: string;
  object: unknown;
}

export interface MetricsJson {
  account: string;
  storedAt: string | null;
  pods: { namespace: string; name: string; timestamp: string; window: string; containers: { name: string; cpu: string; memory: string }[] }[];
}

export type OperationStateName = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';

export interface OperationOutcomeJson {
  index: number;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  result: string;
  code?: number;
  reason?: string;
  message?: string;
}

export interface OperationJson {
  id: string;
  account: string;
  action: string;
  state: OperationStateName;
  idempotencyKey: string;
  objects: number;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  attempts: number;
  agentId?: string;
  message?: string;
  /** The stable code of a failure of the operation as a whole (docs/api.md#operations). */
  errorCode?: string;
  outcomes: OperationOutcomeJson[];
}

export const FINISHED_OPERATION_STATES: readonly OperationStateName[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT'];
