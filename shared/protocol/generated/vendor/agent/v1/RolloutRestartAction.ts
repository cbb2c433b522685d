// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';

/**
 * What `kubectl rollout restart` does: a new pod-template annotation makes the workload roll.
 */
export interface RolloutRestartAction {
  'targets'?: (_vendor_agent_v1_ObjectRef)[];
}

/**
 * What `kubectl rollout restart` does: a new pod-template annotation makes the workload roll.
 */
export interface RolloutRestartAction__Output {
  'targets': (_vendor_agent_v1_ObjectRef__Output)[];
}
