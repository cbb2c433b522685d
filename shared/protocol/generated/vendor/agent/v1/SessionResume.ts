// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What the driver knows of the agent's previous session (Hello.previous_session_id).
 */
export interface SessionResume {
  /**
   * True when the driver knows how far it processed the previous session's reliable messages.
   */
  'known'?: (boolean);
  /**
   * With `known`: the agent drops its unacknowledged messages up to this seq of the previous
   * session instead of sending them again.
   */
  'lastProcessedSeq'?: (number | string | Long);
}

/**
 * What the driver knows of the agent's previous session (Hello.previous_session_id).
 */
export interface SessionResume__Output {
  /**
   * True when the driver knows how far it processed the previous session's reliable messages.
   */
  'known': (boolean);
  /**
   * With `known`: the agent drops its unacknowledged messages up to this seq of the previous
   * session instead of sending them again.
   */
  'lastProcessedSeq': (number);
}
