// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { DeployAction as _vendor_agent_v1_DeployAction, DeployAction__Output as _vendor_agent_v1_DeployAction__Output } from '../../../vendor/agent/v1/DeployAction.ts';
import type { DeleteAction as _vendor_agent_v1_DeleteAction, DeleteAction__Output as _vendor_agent_v1_DeleteAction__Output } from '../../../vendor/agent/v1/DeleteAction.ts';
import type { ScaleAction as _vendor_agent_v1_ScaleAction, ScaleAction__Output as _vendor_agent_v1_ScaleAction__Output } from '../../../vendor/agent/v1/ScaleAction.ts';
import type { PatchAction as _vendor_agent_v1_PatchAction, PatchAction__Output as _vendor_agent_v1_PatchAction__Output } from '../../../vendor/agent/v1/PatchAction.ts';
import type { RolloutRestartAction as _vendor_agent_v1_RolloutRestartAction, RolloutRestartAction__Output as _vendor_agent_v1_RolloutRestartAction__Output } from '../../../vendor/agent/v1/RolloutRestartAction.ts';
import type { RolloutUndoAction as _vendor_agent_v1_RolloutUndoAction, RolloutUndoAction__Output as _vendor_agent_v1_RolloutUndoAction__Output } from '../../../vendor/agent/v1/RolloutUndoAction.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A deployment operation for the agent to run on an account's cluster (docs/operations.md). The
 * driver hands each operation to one agent that holds the account; the agent answers with exactly one
 * OperationResult. The same operation_id may arrive again (another attempt): the agent never runs an
 * id twice, and answers a repeat with the result it already has.
 */
export interface Operation {
  'operationId'?: (string);
  'account'?: (string);
  /**
   * 1 for the first hand-out, raised each time the driver hands the operation out again; echoed in
   * OperationResult.
   */
  'attempt'?: (number);
  /**
   * The agent starts no new cluster request once this long has passed since it received the
   * operation (the control plane times the operation out then); 0 means no limit.
   */
  'timeoutMs'?: (number | string | Long);
  'deploy'?: (_vendor_agent_v1_DeployAction | null);
  'delete'?: (_vendor_agent_v1_DeleteAction | null);
  'scale'?: (_vendor_agent_v1_ScaleAction | null);
  'patch'?: (_vendor_agent_v1_PatchAction | null);
  'rolloutRestart'?: (_vendor_agent_v1_RolloutRestartAction | null);
  'rolloutUndo'?: (_vendor_agent_v1_RolloutUndoAction | null);
  'action'?: "deploy"|"delete"|"scale"|"patch"|"rolloutRestart"|"rolloutUndo";
}

/**
 * A deployment operation for the agent to run on an account's cluster (docs/operations.md). The
 * driver hands each operation to one agent that holds the account; the agent answers with exactly one
 * OperationResult. The same operation_id may arrive again (another attempt): the agent never runs an
 * id twice, and answers a repeat with the result it already has.
 */
export interface Operation__Output {
  'operationId': (string);
  'account': (string);
  /**
   * 1 for the first hand-out, raised each time the driver hands the operation out again; echoed in
   * OperationResult.
   */
  'attempt': (number);
  /**
   * The agent starts no new cluster request once this long has passed since it received the
   * operation (the control plane times the operation out then); 0 means no limit.
   */
  'timeoutMs': (number);
  'deploy'?: (_vendor_agent_v1_DeployAction__Output | null);
  'delete'?: (_vendor_agent_v1_DeleteAction__Output | null);
  'scale'?: (_vendor_agent_v1_ScaleAction__Output | null);
  'patch'?: (_vendor_agent_v1_PatchAction__Output | null);
  'rolloutRestart'?: (_vendor_agent_v1_RolloutRestartAction__Output | null);
  'rolloutUndo'?: (_vendor_agent_v1_RolloutUndoAction__Output | null);
  'action'?: "deploy"|"delete"|"scale"|"patch"|"rolloutRestart"|"rolloutUndo";
}
