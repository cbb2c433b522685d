// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ResourceScope as _vendor_agent_v1_ResourceScope, ResourceScope__Output as _vendor_agent_v1_ResourceScope__Output } from '../../../vendor/agent/v1/ResourceScope.ts';
import type { Long } from '@grpc/proto-loader';

export interface ScopeResume {
  'scope'?: (_vendor_agent_v1_ResourceScope | null);
  'resourceVersion'?: (string);
  'objects'?: (number | string | Long);
  /**
   * How long ago (driver clock) this progress was recorded.
   */
  'ageMs'?: (number | string | Long);
}

export interface ScopeResume__Output {
  'scope': (_vendor_agent_v1_ResourceScope__Output | null);
  'resourceVersion': (string);
  'objects': (number);
  /**
   * How long ago (driver clock) this progress was recorded.
   */
  'ageMs': (number);
}
