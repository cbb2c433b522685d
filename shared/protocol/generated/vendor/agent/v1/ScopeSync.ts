// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ResourceScope as _vendor_agent_v1_ResourceScope, ResourceScope__Output as _vendor_agent_v1_ResourceScope__Output } from '../../../vendor/agent/v1/ResourceScope.ts';
import type { Long } from '@grpc/proto-loader';

export interface ScopeSync {
  'scope'?: (_vendor_agent_v1_ResourceScope | null);
  /**
   * The list's resourceVersion: objects the driver holds at or below it and not named are deleted.
   */
  'resourceVersion'?: (string);
  /**
   * Identifies this list among the scope's lists; a sync too long for one batch comes in parts.
   */
  'listId'?: (number | string | Long);
  /**
   * 1, 2, 3, ... within the list.
   */
  'part'?: (number);
  /**
   * Set on the final part; the driver deletes only when it has every part.
   */
  'last'?: (boolean);
  /**
   * Objects of the scope: `namespace/name`, or `name` for cluster-scoped ones.
   */
  'keys'?: (string)[];
}

export interface ScopeSync__Output {
  'scope': (_vendor_agent_v1_ResourceScope__Output | null);
  /**
   * The list's resourceVersion: objects the driver holds at or below it and not named are deleted.
   */
  'resourceVersion': (string);
  /**
   * Identifies this list among the scope's lists; a sync too long for one batch comes in parts.
   */
  'listId': (number);
  /**
   * 1, 2, 3, ... within the list.
   */
  'part': (number);
  /**
   * Set on the final part; the driver deletes only when it has every part.
   */
  'last': (boolean);
  /**
   * Objects of the scope: `namespace/name`, or `name` for cluster-scoped ones.
   */
  'keys': (string)[];
}
