// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Reserved for watch resume: the driver's answer to ResumeQuery.
 */
export interface ResumeInfo {
  'queryId'?: (number | string | Long);
  'account'?: (string);
}

/**
 * Reserved for watch resume: the driver's answer to ResumeQuery.
 */
export interface ResumeInfo__Output {
  'queryId': (number);
  'account': (string);
}
