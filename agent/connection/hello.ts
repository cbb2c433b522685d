/**
 * What the agent tells the driver about its own `kubernetes.accounts[]` in Hello: each account's
 * name and non-secret settings. Kubeconfig paths and anything else that could lead to credentials
 * stay on the agent: only the fields listed here are copied.
 */
import type { AccountSettings, StaticAccount } from '../../shared/protocol/messages.ts';

/** The keys of a `kubernetes.accounts[]` entry (SPEC.md 2.5) that Hello carries; others are ignored. */
export interface AgentAccountConfig {
  name: string;
  context?: string;
  serviceAccount?: boolean;
  insecure?: boolean;
  noProxy?: boolean;
  oAuthScopes?: string[];
  namespaces?: string[];
  omitNamespaces?: string[];
  onlyNamespacedResources?: boolean;
  customResourceDefinitions?: { kind: string; scope?: string }[];
  kinds?: string[];
  omitKinds?: string[];
  metrics?: boolean;
  maxResumableResourceAgeMs?: number;
  /** Entries of the form `{ READ: [...] }` or `{ WRITE: [...] }`. */
  permissions?: { READ?: string[]; WRITE?: string[] }[];
}

function settingsOf(a: AgentAccountConfig): AccountSettings {
  return {
    context: a.context ?? '',
    serviceAccount: a.serviceAccount ?? false,
    insecure: a.insecure ?? false,
    noProxy: a.noProxy ?? false,
    oAuthScopes: a.oAuthScopes ?? [],
    namespaces: a.namespaces ?? [],
    omitNamespaces: a.omitNamespaces ?? [],
    onlyNamespacedResources: a.onlyNamespacedResources ?? false,
    customResourceDefinitions: (a.customResourceDefinitions ?? []).map((c) => ({ kind: c.kind, scope: c.scope ?? 'Namespaced' })),
    kinds: a.kinds ?? [],
    omitKinds: a.omitKinds ?? [],
    metrics: a.metrics ?? false,
    maxResumableResourceAgeMs: a.maxResumableResourceAgeMs ?? 0,
    permissions: {
      read: (a.permissions ?? []).flatMap((p) => p.READ ?? []),
      write: (a.permissions ?? []).flatMap((p) => p.WRITE ?? []),
    },
  };
}

export function staticAccountsForHello(accounts: readonly AgentAccountConfig[]): StaticAccount[] {
  return accounts.map((a) => ({ name: a.name, settings: settingsOf(a) }));
}
