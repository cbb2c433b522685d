// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ScopeResume as _vendor_agent_v1_ScopeResume, ScopeResume__Output as _vendor_agent_v1_ScopeResume__Output } from '../../../vendor/agent/v1/ScopeResume.ts';
import type { Long } from '@grpc/proto-loader';

export interface ResumeInfo {
  'queryId'?: (number | string | Long);
  'account'?: (string);
  /**
   * False when the query's caching epoch is not the account's current one (the agent must not
   * cache it); `message` says why.
   */
  'accepted'?: (boolean);
  'message'?: (string);
  'scopes'?: (_vendor_agent_v1_ScopeResume)[];
}

export interface ResumeInfo__Output {
  'queryId': (number);
  'account': (string);
  /**
   * False when the query's caching epoch is not the account's current one (the agent must not
   * cache it); `message` says why.
   */
  'accepted': (boolean);
  'message': (string);
  'scopes': (_vendor_agent_v1_ScopeResume__Output)[];
}
