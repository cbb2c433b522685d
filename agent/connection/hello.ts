/**
 * What the agent tells the driver about its own `kubernetes.accounts[]` in Hello: each account's
 * name and non-secret settings. Kubeconfig paths and anything else that could lead to credentials
 * stay on the agent: only the fields listed here are copied.
 */
import type { StaticAccount } from '../../shared/protocol/messages.ts';
import { accountSettingsMessage, type AccountKeys } from '../../shared/accounts/settings-message.ts';

/** The keys of a `kubernetes.accounts[]` entry (docs/agent-config.md#per-account-kubernetesaccounts) that Hello carries; others are ignored. */
export interface AgentAccountConfig extends AccountKeys {
  name: string;
}

export function staticAccountsForHello(accounts: readonly AgentAccountConfig[]): StaticAccount[] {
  return accounts.map((a) => ({ name: a.name, settings: accountSettingsMessage(a) }));
}
