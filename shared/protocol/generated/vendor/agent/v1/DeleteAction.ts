// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';

export interface DeleteAction {
  'targets'?: (_vendor_agent_v1_ObjectRef)[];
  /**
   * `Background`, `Foreground` or `Orphan`; empty leaves the choice to the API server.
   */
  'propagationPolicy'?: (string);
}

export interface DeleteAction__Output {
  'targets': (_vendor_agent_v1_ObjectRef__Output)[];
  /**
   * `Background`, `Foreground` or `Orphan`; empty leaves the choice to the API server.
   */
  'propagationPolicy': (string);
}
