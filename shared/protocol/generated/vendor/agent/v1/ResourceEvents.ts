// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ResourceChange as _vendor_agent_v1_ResourceChange, ResourceChange__Output as _vendor_agent_v1_ResourceChange__Output } from '../../../vendor/agent/v1/ResourceChange.ts';
import type { ScopeSync as _vendor_agent_v1_ScopeSync, ScopeSync__Output as _vendor_agent_v1_ScopeSync__Output } from '../../../vendor/agent/v1/ScopeSync.ts';
import type { ScopeProgress as _vendor_agent_v1_ScopeProgress, ScopeProgress__Output as _vendor_agent_v1_ScopeProgress__Output } from '../../../vendor/agent/v1/ScopeProgress.ts';
import type { ScopeSet as _vendor_agent_v1_ScopeSet, ScopeSet__Output as _vendor_agent_v1_ScopeSet__Output } from '../../../vendor/agent/v1/ScopeSet.ts';
import type { KindHealth as _vendor_agent_v1_KindHealth, KindHealth__Output as _vendor_agent_v1_KindHealth__Output } from '../../../vendor/agent/v1/KindHealth.ts';
import type { ClusterStatus as _vendor_agent_v1_ClusterStatus, ClusterStatus__Output as _vendor_agent_v1_ClusterStatus__Output } from '../../../vendor/agent/v1/ClusterStatus.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Resource changes from the caching agent of an account, in the order the agent observed them
 * (docs/cache.md). Reliable: the driver acknowledges a batch once it has taken it for the table.
 */
export interface ResourceEvents {
  'account'?: (string);
  /**
   * The epoch of the caching role this agent holds; the driver refuses batches of any other epoch.
   */
  'cachingEpoch'?: (number | string | Long);
  /**
   * Objects created, changed or deleted, each in its compact form (docs/cache.md).
   */
  'changes'?: (_vendor_agent_v1_ResourceChange)[];
  /**
   * After a full list (or a WatchList's initial events) of one scope: the complete set of its
   * objects at that resourceVersion, so the driver deletes what the cluster no longer has.
   */
  'syncs'?: (_vendor_agent_v1_ScopeSync)[];
  /**
   * How far each scope has been observed. The driver records a scope's progress only once every
   * change before it is in the table, so a resume from it never skips a change.
   */
  'progress'?: (_vendor_agent_v1_ScopeProgress)[];
  /**
   * When set: every scope the agent caches for the account; the driver drops the data of others.
   */
  'scopeSet'?: (_vendor_agent_v1_ScopeSet | null);
  /**
   * When not empty: the cache's health per kind, replacing what the driver held.
   */
  'health'?: (_vendor_agent_v1_KindHealth)[];
  /**
   * The query_id of the last accepted ResumeInfo the agent had when it made this batch (0 for none).
   * The driver records `progress` only when it answered that query on this same stream: then every
   * change since the agent learnt where the table stands came on this stream. A batch made before,
   * and sent again on a new stream after the replica that took it died, may follow changes the
   * table never got; its progress is dropped, its changes and syncs are kept.
   */
  'resumeQueryId'?: (number | string | Long);
  /**
   * When set: whether the account's cluster answers the caching agent, replacing what the driver
   * held (sent when it changes, and with every health report).
   */
  'clusterStatus'?: (_vendor_agent_v1_ClusterStatus | null);
}

/**
 * Resource changes from the caching agent of an account, in the order the agent observed them
 * (docs/cache.md). Reliable: the driver acknowledges a batch once it has taken it for the table.
 */
export interface ResourceEvents__Output {
  'account': (string);
  /**
   * The epoch of the caching role this agent holds; the driver refuses batches of any other epoch.
   */
  'cachingEpoch': (number);
  /**
   * Objects created, changed or deleted, each in its compact form (docs/cache.md).
   */
  'changes': (_vendor_agent_v1_ResourceChange__Output)[];
  /**
   * After a full list (or a WatchList's initial events) of one scope: the complete set of its
   * objects at that resourceVersion, so the driver deletes what the cluster no longer has.
   */
  'syncs': (_vendor_agent_v1_ScopeSync__Output)[];
  /**
   * How far each scope has been observed. The driver records a scope's progress only once every
   * change before it is in the table, so a resume from it never skips a change.
   */
  'progress': (_vendor_agent_v1_ScopeProgress__Output)[];
  /**
   * When set: every scope the agent caches for the account; the driver drops the data of others.
   */
  'scopeSet': (_vendor_agent_v1_ScopeSet__Output | null);
  /**
   * When not empty: the cache's health per kind, replacing what the driver held.
   */
  'health': (_vendor_agent_v1_KindHealth__Output)[];
  /**
   * The query_id of the last accepted ResumeInfo the agent had when it made this batch (0 for none).
   * The driver records `progress` only when it answered that query on this same stream: then every
   * change since the agent learnt where the table stands came on this stream. A batch made before,
   * and sent again on a new stream after the replica that took it died, may follow changes the
   * table never got; its progress is dropped, its changes and syncs are kept.
   */
  'resumeQueryId': (number);
  /**
   * When set: whether the account's cluster answers the caching agent, replacing what the driver
   * held (sent when it changes, and with every health report).
   */
  'clusterStatus': (_vendor_agent_v1_ClusterStatus__Output | null);
}
