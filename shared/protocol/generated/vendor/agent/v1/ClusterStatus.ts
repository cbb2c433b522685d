// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Whether the cluster of an account answers its caching agent with the account's credential
 * (docs/cache.md#when-the-cluster-does-not-answer). Ages, not times, as in KindHealth.
 */
export interface ClusterStatus {
  'reachable'?: (boolean);
  /**
   * Milliseconds since the present state began (the outage's start, or when the cluster answered again).
   */
  'sinceAgeMs'?: (number | string | Long);
  /**
   * While not reachable: "unreachable" (no answer) or "unauthorized" (the credential is refused),
   * and the last failure as the server or the socket said it.
   */
  'reason'?: (string);
  'error'?: (string);
  /**
   * The last outage that ended, when there was one ("" and -1 otherwise).
   */
  'lastOutageReason'?: (string);
  'lastOutageFromAgeMs'?: (number | string | Long);
  'lastOutageUntilAgeMs'?: (number | string | Long);
}

/**
 * Whether the cluster of an account answers its caching agent with the account's credential
 * (docs/cache.md#when-the-cluster-does-not-answer). Ages, not times, as in KindHealth.
 */
export interface ClusterStatus__Output {
  'reachable': (boolean);
  /**
   * Milliseconds since the present state began (the outage's start, or when the cluster answered again).
   */
  'sinceAgeMs': (number);
  /**
   * While not reachable: "unreachable" (no answer) or "unauthorized" (the credential is refused),
   * and the last failure as the server or the socket said it.
   */
  'reason': (string);
  'error': (string);
  /**
   * The last outage that ended, when there was one ("" and -1 otherwise).
   */
  'lastOutageReason': (string);
  'lastOutageFromAgeMs': (number);
  'lastOutageUntilAgeMs': (number);
}
