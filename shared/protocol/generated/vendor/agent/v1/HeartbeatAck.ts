// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface HeartbeatAck {
  'id'?: (number | string | Long);
}

export interface HeartbeatAck__Output {
  'id': (number);
}
