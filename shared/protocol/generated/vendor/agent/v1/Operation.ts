// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * Reserved for deployment operations dispatched to the agent.
 */
export interface Operation {
  'operationId'?: (string);
  'account'?: (string);
}

/**
 * Reserved for deployment operations dispatched to the agent.
 */
export interface Operation__Output {
  'operationId': (string);
  'account': (string);
}
