// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Reserved for the resource cache: batches of compact resource changes from the caching agent.
 */
export interface ResourceEvents {
  'account'?: (string);
  'cachingEpoch'?: (number | string | Long);
}

/**
 * Reserved for the resource cache: batches of compact resource changes from the caching agent.
 */
export interface ResourceEvents__Output {
  'account': (string);
  'cachingEpoch': (number);
}
