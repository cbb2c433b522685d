// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ResourceScope as _vendor_agent_v1_ResourceScope, ResourceScope__Output as _vendor_agent_v1_ResourceScope__Output } from '../../../vendor/agent/v1/ResourceScope.ts';

export interface ScopeSet {
  'scopes'?: (_vendor_agent_v1_ResourceScope)[];
}

export interface ScopeSet__Output {
  'scopes': (_vendor_agent_v1_ResourceScope__Output)[];
}
