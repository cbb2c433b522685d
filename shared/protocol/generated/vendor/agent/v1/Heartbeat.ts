// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface Heartbeat {
  /**
   * Echoed by HeartbeatAck.
   */
  'id'?: (number | string | Long);
}

export interface Heartbeat__Output {
  /**
   * Echoed by HeartbeatAck.
   */
  'id': (number);
}
