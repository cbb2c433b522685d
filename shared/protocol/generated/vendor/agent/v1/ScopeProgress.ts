// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ResourceScope as _vendor_agent_v1_ResourceScope, ResourceScope__Output as _vendor_agent_v1_ResourceScope__Output } from '../../../vendor/agent/v1/ResourceScope.ts';
import type { Long } from '@grpc/proto-loader';

export interface ScopeProgress {
  'scope'?: (_vendor_agent_v1_ResourceScope | null);
  'resourceVersion'?: (string);
  /**
   * Objects the agent counts in the scope, for health and for the next resume.
   */
  'objects'?: (number | string | Long);
}

export interface ScopeProgress__Output {
  'scope': (_vendor_agent_v1_ResourceScope__Output | null);
  'resourceVersion': (string);
  /**
   * Objects the agent counts in the scope, for health and for the next resume.
   */
  'objects': (number);
}
