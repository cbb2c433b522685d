/**
 * An account's settings to and from the protocol's `AccountSettings` (docs/protocol.md#hello), where
 * every field is present: the agent builds it for its static accounts in Hello, the driver for each
 * assignment, and the driver reads it back from a Hello's `static_accounts[]`. Kubeconfig paths and
 * references never enter it.
 */
import type { AccountSettings__Output, StaticAccount__Output } from '../protocol/messages.ts';
import { SETTING_DEFAULTS, withDefaults, type AccountSettings } from './settings.ts';

/** The keys of an account's settings the message carries, as either end holds them. */
export type AccountKeys = Omit<AccountSettings, 'name' | 'kubeconfigFile'>;

export function accountSettingsMessage(settings: AccountKeys): AccountSettings__Output {
  const full = withDefaults(settings);
  return {
    context: full.context,
    serviceAccount: full.serviceAccount,
    insecure: full.insecure,
    noProxy: full.noProxy,
    oAuthScopes: [...full.oAuthScopes],
    namespaces: [...full.namespaces],
    omitNamespaces: [...full.omitNamespaces],
    onlyNamespacedResources: full.onlyNamespacedResources,
    customResourceDefinitions: full.customResourceDefinitions.map((c) => ({ kind: c.kind, scope: c.scope })),
    kinds: [...full.kinds],
    omitKinds: [...full.omitKinds],
    clusterScopedKinds: [...full.clusterScopedKinds],
    onlySpinnakerManaged: full.onlySpinnakerManaged,
    metrics: full.metrics,
    // On the wire 0 is the default, so a value left out travels as 0 (the agent reads 0 as 300000).
    maxResumableResourceAgeMs: settings.maxResumableResourceAgeMs ?? 0,
    permissions: {
      read: full.permissions.flatMap((p) => p.READ ?? []),
      write: full.permissions.flatMap((p) => p.WRITE ?? []),
    },
  };
}

/** The settings at their defaults, as an assignment without settings means them. */
export const DEFAULT_SETTINGS_MESSAGE: AccountSettings__Output = accountSettingsMessage({});

/**
 * A Hello's static account in the stored shape: its name and the settings that differ from the
 * message's defaults. Not yet checked: it is the input of `accountSettingsSchema`.
 */
export function staticAccountSettings(account: StaticAccount__Output): Record<string, unknown> {
  const out: Record<string, unknown> = { name: account.name };
  const s = account.settings;
  if (s === null) return out;
  const keep = (key: string, value: unknown, given: boolean) => {
    if (given) out[key] = value;
  };
  keep('context', s.context, s.context !== SETTING_DEFAULTS.context);
  keep('serviceAccount', true, s.serviceAccount);
  keep('insecure', true, s.insecure);
  keep('noProxy', true, s.noProxy);
  keep('oAuthScopes', s.oAuthScopes, s.oAuthScopes.length > 0);
  keep('namespaces', s.namespaces, s.namespaces.length > 0);
  keep('omitNamespaces', s.omitNamespaces, s.omitNamespaces.length > 0);
  keep('onlyNamespacedResources', true, s.onlyNamespacedResources);
  keep(
    'customResourceDefinitions',
    s.customResourceDefinitions.map((c) => ({ kind: c.kind, scope: c.scope === '' ? SETTING_DEFAULTS.crdScope : c.scope })),
    s.customResourceDefinitions.length > 0,
  );
  keep('kinds', s.kinds, s.kinds.length > 0);
  keep('omitKinds', s.omitKinds, s.omitKinds.length > 0);
  keep('clusterScopedKinds', s.clusterScopedKinds, s.clusterScopedKinds.length > 0);
  keep('onlySpinnakerManaged', true, s.onlySpinnakerManaged);
  keep('metrics', true, s.metrics);
  keep('maxResumableResourceAgeMs', s.maxResumableResourceAgeMs, s.maxResumableResourceAgeMs > 0);
  const read = s.permissions?.read ?? [];
  const write = s.permissions?.write ?? [];
  keep('permissions', [...(read.length > 0 ? [{ READ: read }] : []), ...(write.length > 0 ? [{ WRITE: write }] : [])], read.length + write.length > 0);
  return out;
}
