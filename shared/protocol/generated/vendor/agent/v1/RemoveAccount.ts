// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface RemoveAccount {
  'account'?: (string);
  'generation'?: (number | string | Long);
}

export interface RemoveAccount__Output {
  'account': (string);
  'generation': (number);
}
