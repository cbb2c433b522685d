/**
 * The per-account keys of `kubernetes.accounts[]` (docs/agent-config.md#per-account-kubernetesaccounts) in the protocol's `AccountSettings`
 * shape, where every field is present. Both ends build it: the agent for its static accounts in
 * Hello, the driver for each assignment. Kubeconfig paths and references never enter it.
 */
import type { AccountSettings } from './messages.ts';

/** The non-secret keys of one `kubernetes.accounts[]` entry, as either end holds them. */
export interface AccountKeys {
  context?: string | undefined;
  serviceAccount?: boolean | undefined;
  insecure?: boolean | undefined;
  noProxy?: boolean | undefined;
  oAuthScopes?: readonly string[] | undefined;
  namespaces?: readonly string[] | undefined;
  omitNamespaces?: readonly string[] | undefined;
  onlyNamespacedResources?: boolean | undefined;
  customResourceDefinitions?: readonly { kind: string; scope?: string | undefined }[] | undefined;
  kinds?: readonly string[] | undefined;
  omitKinds?: readonly string[] | undefined;
  clusterScopedKinds?: readonly string[] | undefined;
  metrics?: boolean | undefined;
  maxResumableResourceAgeMs?: number | undefined;
  /** Entries of the form `{ READ: [...] }` or `{ WRITE: [...] }`. */
  permissions?: readonly { READ?: readonly string[] | undefined; WRITE?: readonly string[] | undefined }[] | undefined;
}

export function accountSettingsMessage(a: AccountKeys): AccountSettings {
  return {
    context: a.context ?? '',
    serviceAccount: a.serviceAccount ?? false,
    insecure: a.insecure ?? false,
    noProxy: a.noProxy ?? false,
    oAuthScopes: [...(a.oAuthScopes ?? [])],
    namespaces: [...(a.namespaces ?? [])],
    omitNamespaces: [...(a.omitNamespaces ?? [])],
    onlyNamespacedResources: a.onlyNamespacedResources ?? false,
    customResourceDefinitions: (a.customResourceDefinitions ?? []).map((c) => ({ kind: c.kind, scope: c.scope ?? 'Namespaced' })),
    kinds: [...(a.kinds ?? [])],
    omitKinds: [...(a.omitKinds ?? [])],
    clusterScopedKinds: [...(a.clusterScopedKinds ?? [])],
    metrics: a.metrics ?? false,
    maxResumableResourceAgeMs: a.maxResumableResourceAgeMs ?? 0,
    permissions: {
      read: (a.permissions ?? []).flatMap((p) => p.READ ?? []),
      write: (a.permissions ?? []).flatMap((p) => p.WRITE ?? []),
    },
  };
}
