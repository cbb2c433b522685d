// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Reserved for pod metrics, sent every 20 seconds for accounts with `metrics: true`.
 */
export interface PodMetrics {
  'account'?: (string);
  'cachingEpoch'?: (number | string | Long);
}

/**
 * Reserved for pod metrics, sent every 20 seconds for accounts with `metrics: true`.
 */
export interface PodMetrics__Output {
  'account': (string);
  'cachingEpoch': (number);
}
