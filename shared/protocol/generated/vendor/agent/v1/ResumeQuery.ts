// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

/**
 * The agent asks, when it starts caching an account and after every reconnect, where each scope's
 * watch can resume. Answered by ResumeInfo with the same query_id; the agent asks again when no
 * answer comes.
 */
export interface ResumeQuery {
  'queryId'?: (number | string | Long);
  'account'?: (string);
  'cachingEpoch'?: (number | string | Long);
  /**
   * `maxResumableResourceAgeMs`: progress seen longer ago than this is not offered.
   */
  'maxAgeMs'?: (number | string | Long);
  /**
   * The API server the agent caches the account from (its URL). Only progress recorded for the same
   * one is offered: resourceVersions of another cluster (an account pointed elsewhere, or deleted and
   * registered again for another cluster) mean nothing here.
   */
  'cluster'?: (string);
}

/**
 * The agent asks, when it starts caching an account and after every reconnect, where each scope's
 * watch can resume. Answered by ResumeInfo with the same query_id; the agent asks again when no
 * answer comes.
 */
export interface ResumeQuery__Output {
  'queryId': (number);
  'account': (string);
  'cachingEpoch': (number);
  /**
   * `maxResumableResourceAgeMs`: progress seen longer ago than this is not offered.
   */
  'maxAgeMs': (number);
  /**
   * The API server the agent caches the account from (its URL). Only progress recorded for the same
   * one is offered: resourceVersions of another cluster (an account pointed elsewhere, or deleted and
   * registered again for another cluster) mean nothing here.
   */
  'cluster': (string);
}
