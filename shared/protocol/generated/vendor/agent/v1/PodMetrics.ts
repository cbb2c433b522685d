// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { PodUsage as _vendor_agent_v1_PodUsage, PodUsage__Output as _vendor_agent_v1_PodUsage__Output } from '../../../vendor/agent/v1/PodUsage.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Pod metrics of an account from `metrics.k8s.io`, every 20 seconds for accounts with
 * `metrics: true`, sent by the caching agent. One reading may come in several parts; a part
 * completely replaces the metrics of the namespaces it names.
 */
export interface PodMetrics {
  'account'?: (string);
  'cachingEpoch'?: (number | string | Long);
  /**
   * Raised for every reading; the parts of one reading share it.
   */
  'readingId'?: (number | string | Long);
  /**
   * The namespaces this part covers completely (pods of these namespaces not listed are gone).
   */
  'namespaces'?: (string)[];
  'pods'?: (_vendor_agent_v1_PodUsage)[];
  /**
   * Set on the final part of a reading: when every part of the reading arrived, metrics of
   * namespaces no part named are dropped.
   */
  'last'?: (boolean);
  /**
   * 1, 2, 3, ... within the reading.
   */
  'part'?: (number);
}

/**
 * Pod metrics of an account from `metrics.k8s.io`, every 20 seconds for accounts with
 * `metrics: true`, sent by the caching agent. One reading may come in several parts; a part
 * completely replaces the metrics of the namespaces it names.
 */
export interface PodMetrics__Output {
  'account': (string);
  'cachingEpoch': (number);
  /**
   * Raised for every reading; the parts of one reading share it.
   */
  'readingId': (number);
  /**
   * The namespaces this part covers completely (pods of these namespaces not listed are gone).
   */
  'namespaces': (string)[];
  'pods': (_vendor_agent_v1_PodUsage__Output)[];
  /**
   * Set on the final part of a reading: when every part of the reading arrived, metrics of
   * namespaces no part named are dropped.
   */
  'last': (boolean);
  /**
   * 1, 2, 3, ... within the reading.
   */
  'part': (number);
}
