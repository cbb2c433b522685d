// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { AccountSettings as _vendor_agent_v1_AccountSettings, AccountSettings__Output as _vendor_agent_v1_AccountSettings__Output } from '../../../vendor/agent/v1/AccountSettings.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Hand an account to the agent, or update one it holds (settings, caching role).
 */
export interface AssignAccount {
  'account'?: (string);
  /**
   * Raised by the control plane on every change of the account; echoed in AssignmentResult.
   */
  'generation'?: (number | string | Long);
  /**
   * Secret reference to the kubeconfig (a path, `encrypted:` or `encryptedFile:` form), never its
   * contents; empty when the account uses the agent's service account or its own configuration.
   */
  'kubeconfigRef'?: (string);
  'settings'?: (_vendor_agent_v1_AccountSettings | null);
  /**
   * Whether this agent caches the account (exactly one agent per account does).
   */
  'caching'?: (boolean);
  /**
   * Raised on every caching takeover; messages carrying cache data carry it back.
   */
  'cachingEpoch'?: (number | string | Long);
  'zoneId'?: (string);
  /**
   * True for one of the agent's own static accounts (announced in Hello): the agent connects with
   * its own vendor-agent.yml entry, and `kubeconfig_ref` is empty.
   */
  'staticAccount'?: (boolean);
}

/**
 * Hand an account to the agent, or update one it holds (settings, caching role).
 */
export interface AssignAccount__Output {
  'account': (string);
  /**
   * Raised by the control plane on every change of the account; echoed in AssignmentResult.
   */
  'generation': (number);
  /**
   * Secret reference to the kubeconfig (a path, `encrypted:` or `encryptedFile:` form), never its
   * contents; empty when the account uses the agent's service account or its own configuration.
   */
  'kubeconfigRef': (string);
  'settings': (_vendor_agent_v1_AccountSettings__Output | null);
  /**
   * Whether this agent caches the account (exactly one agent per account does).
   */
  'caching': (boolean);
  /**
   * Raised on every caching takeover; messages carrying cache data carry it back.
   */
  'cachingEpoch': (number);
  'zoneId': (string);
  /**
   * True for one of the agent's own static accounts (announced in Hello): the agent connects with
   * its own vendor-agent.yml entry, and `kubeconfig_ref` is empty.
   */
  'staticAccount': (boolean);
}
