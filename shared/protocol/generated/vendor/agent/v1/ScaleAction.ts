// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';

/**
 * Sets the replicas of each target through its scale subresource.
 */
export interface ScaleAction {
  'targets'?: (_vendor_agent_v1_ObjectRef)[];
  'replicas'?: (number);
}

/**
 * Sets the replicas of each target through its scale subresource.
 */
export interface ScaleAction__Output {
  'targets': (_vendor_agent_v1_ObjectRef__Output)[];
  'replicas': (number);
}
