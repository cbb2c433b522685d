// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface HeldAccount {
  'name'?: (string);
  'generation'?: (number | string | Long);
  'caching'?: (boolean);
  'cachingEpoch'?: (number | string | Long);
}

export interface HeldAccount__Output {
  'name': (string);
  'generation': (number);
  'caching': (boolean);
  'cachingEpoch': (number);
}
