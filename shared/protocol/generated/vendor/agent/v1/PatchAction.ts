// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';

export interface PatchAction {
  'target'?: (_vendor_agent_v1_ObjectRef | null);
  /**
   * `strategic`, `merge` or `json`.
   */
  'patchType'?: (string);
  /**
   * The patch document as JSON: an object, or for `json` a list of operations.
   */
  'patch'?: (string);
}

export interface PatchAction__Output {
  'target': (_vendor_agent_v1_ObjectRef__Output | null);
  /**
   * `strategic`, `merge` or `json`.
   */
  'patchType': (string);
  /**
   * The patch document as JSON: an object, or for `json` a list of operations.
   */
  'patch': (string);
}
