// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface KindHealth {
  'group'?: (string);
  'kind'?: (string);
  /**
   * Scopes (namespaces) of the kind and how many of them have a watch open right now.
   */
  'scopes'?: (number);
  'watching'?: (number);
  'objects'?: (number | string | Long);
  /**
   * Milliseconds since the last watch event of the kind when the agent reported; -1 for none yet.
   */
  'lastEventAgeMs'?: (number | string | Long);
  /**
   * Full lists made, and how many of them followed a 410 Gone.
   */
  'relists'?: (number | string | Long);
  'expired'?: (number | string | Long);
  /**
   * The last error of the kind's lists and watches (empty when none), and its age in milliseconds.
   */
  'lastError'?: (string);
  'lastErrorAgeMs'?: (number | string | Long);
}

export interface KindHealth__Output {
  'group': (string);
  'kind': (string);
  /**
   * Scopes (namespaces) of the kind and how many of them have a watch open right now.
   */
  'scopes': (number);
  'watching': (number);
  'objects': (number);
  /**
   * Milliseconds since the last watch event of the kind when the agent reported; -1 for none yet.
   */
  'lastEventAgeMs': (number);
  /**
   * Full lists made, and how many of them followed a 410 Gone.
   */
  'relists': (number);
  'expired': (number);
  /**
   * The last error of the kind's lists and watches (empty when none), and its age in milliseconds.
   */
  'lastError': (string);
  'lastErrorAgeMs': (number);
}
