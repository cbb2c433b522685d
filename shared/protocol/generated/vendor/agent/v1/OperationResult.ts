// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * Reserved for the outcome of an Operation.
 */
export interface OperationResult {
  'operationId'?: (string);
  'account'?: (string);
}

/**
 * Reserved for the outcome of an Operation.
 */
export interface OperationResult__Output {
  'operationId': (string);
  'account': (string);
}
