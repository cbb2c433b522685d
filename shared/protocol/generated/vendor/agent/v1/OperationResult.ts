// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectOutcome as _vendor_agent_v1_ObjectOutcome, ObjectOutcome__Output as _vendor_agent_v1_ObjectOutcome__Output } from '../../../vendor/agent/v1/ObjectOutcome.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * The outcome of an Operation, sent once it has finished (or could not start).
 */
export interface OperationResult {
  'operationId'?: (string);
  'account'?: (string);
  /**
   * The attempt of the Operation this answers.
   */
  'attempt'?: (number);
  /**
   * True when every manifest or target succeeded.
   */
  'ok'?: (boolean);
  /**
   * About the operation as a whole (why it could not start, or a summary); never carries secrets.
   */
  'message'?: (string);
  /**
   * One per manifest or target, in request order.
   */
  'outcomes'?: (_vendor_agent_v1_ObjectOutcome)[];
  /**
   * The agent's clock, ms since the epoch.
   */
  'startedAtMs'?: (number | string | Long);
  'finishedAtMs'?: (number | string | Long);
  /**
   * How long the operation waited for the agent's task budget (`tasks.*`) before it started.
   */
  'budgetWaitMs'?: (number | string | Long);
  /**
   * The stable code of a failure of the operation as a whole, one of the codes of shared/errors.ts
   * (`invalid_input` for an operation the agent refused); empty when it succeeded or when its
   * outcomes say why it failed. An older agent leaves it empty (its `message` starts with the code).
   */
  'errorCode'?: (string);
}

/**
 * The outcome of an Operation, sent once it has finished (or could not start).
 */
export interface OperationResult__Output {
  'operationId': (string);
  'account': (string);
  /**
   * The attempt of the Operation this answers.
   */
  'attempt': (number);
  /**
   * True when every manifest or target succeeded.
   */
  'ok': (boolean);
  /**
   * About the operation as a whole (why it could not start, or a summary); never carries secrets.
   */
  'message': (string);
  /**
   * One per manifest or target, in request order.
   */
  'outcomes': (_vendor_agent_v1_ObjectOutcome__Output)[];
  /**
   * The agent's clock, ms since the epoch.
   */
  'startedAtMs': (number);
  'finishedAtMs': (number);
  /**
   * How long the operation waited for the agent's task budget (`tasks.*`) before it started.
   */
  'budgetWaitMs': (number);
  /**
   * The stable code of a failure of the operation as a whole, one of the codes of shared/errors.ts
   * (`invalid_input` for an operation the agent refused); empty when it succeeded or when its
   * outcomes say why it failed. An older agent leaves it empty (its `message` starts with the code).
   */
  'errorCode': (string);
}
