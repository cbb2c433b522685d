// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * The agent's answer to AssignAccount, after it has tried the cluster.
 */
export interface AssignmentResult {
  'account'?: (string);
  'generation'?: (number | string | Long);
  'ok'?: (boolean);
  /**
   * The agent's own message, for example why the kubeconfig is invalid. Never carries secrets.
   */
  'message'?: (string);
}

/**
 * The agent's answer to AssignAccount, after it has tried the cluster.
 */
export interface AssignmentResult__Output {
  'account': (string);
  'generation': (number);
  'ok': (boolean);
  /**
   * The agent's own message, for example why the kubeconfig is invalid. Never carries secrets.
   */
  'message': (string);
}
