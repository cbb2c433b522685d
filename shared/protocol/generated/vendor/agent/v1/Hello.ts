// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { StaticAccount as _vendor_agent_v1_StaticAccount, StaticAccount__Output as _vendor_agent_v1_StaticAccount__Output } from '../../../vendor/agent/v1/StaticAccount.ts';
import type { HeldAccount as _vendor_agent_v1_HeldAccount, HeldAccount__Output as _vendor_agent_v1_HeldAccount__Output } from '../../../vendor/agent/v1/HeldAccount.ts';

/**
 * First message of every stream, sent again after each reconnect.
 */
export interface Hello {
  /**
   * Protocol version the agent speaks; this file defines version 1.
   */
  'protocolVersion'?: (number);
  /**
   * Identifier of the agent instance (its pod name by default), stable across reconnects.
   */
  'agentId'?: (string);
  /**
   * The agent's zone, `<deploymentName>_<namespace>`.
   */
  'zone'?: (string);
  'agentVersion'?: (string);
  /**
   * The accounts of the agent's own vendor-agent.yml, without secrets.
   */
  'staticAccounts'?: (_vendor_agent_v1_StaticAccount)[];
  /**
   * Accounts the agent serves right now (after a reconnect), so the driver can reconcile.
   */
  'heldAccounts'?: (_vendor_agent_v1_HeldAccount)[];
  /**
   * Session id of the stream this agent instance had before reconnecting; empty on its first stream.
   */
  'previousSessionId'?: (string);
}

/**
 * First message of every stream, sent again after each reconnect.
 */
export interface Hello__Output {
  /**
   * Protocol version the agent speaks; this file defines version 1.
   */
  'protocolVersion': (number);
  /**
   * Identifier of the agent instance (its pod name by default), stable across reconnects.
   */
  'agentId': (string);
  /**
   * The agent's zone, `<deploymentName>_<namespace>`.
   */
  'zone': (string);
  'agentVersion': (string);
  /**
   * The accounts of the agent's own vendor-agent.yml, without secrets.
   */
  'staticAccounts': (_vendor_agent_v1_StaticAccount__Output)[];
  /**
   * Accounts the agent serves right now (after a reconnect), so the driver can reconcile.
   */
  'heldAccounts': (_vendor_agent_v1_HeldAccount__Output)[];
  /**
   * Session id of the stream this agent instance had before reconnecting; empty on its first stream.
   */
  'previousSessionId': (string);
}
