// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * What `kubectl rollout undo` does for a Deployment: its pod template goes back to a revision's.
 */
export interface RolloutUndoAction {
  'target'?: (_vendor_agent_v1_ObjectRef | null);
  /**
   * The revision to go back to; 0 means the one before the current revision.
   */
  'toRevision'?: (number | string | Long);
}

/**
 * What `kubectl rollout undo` does for a Deployment: its pod template goes back to a revision's.
 */
export interface RolloutUndoAction__Output {
  'target': (_vendor_agent_v1_ObjectRef__Output | null);
  /**
   * The revision to go back to; 0 means the one before the current revision.
   */
  'toRevision': (number);
}
