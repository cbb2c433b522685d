// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { AccountSettings as _vendor_agent_v1_AccountSettings, AccountSettings__Output as _vendor_agent_v1_AccountSettings__Output } from '../../../vendor/agent/v1/AccountSettings.ts';

export interface StaticAccount {
  'name'?: (string);
  'settings'?: (_vendor_agent_v1_AccountSettings | null);
}

export interface StaticAccount__Output {
  'name': (string);
  'settings': (_vendor_agent_v1_AccountSettings__Output | null);
}
