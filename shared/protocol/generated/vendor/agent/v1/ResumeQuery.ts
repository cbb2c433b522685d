// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Reserved for watch resume: the agent asks for the latest known resourceVersion per kind.
 */
export interface ResumeQuery {
  'queryId'?: (number | string | Long);
  'account'?: (string);
}

/**
 * Reserved for watch resume: the agent asks for the latest known resourceVersion per kind.
 */
export interface ResumeQuery__Output {
  'queryId': (number);
  'account': (string);
}
