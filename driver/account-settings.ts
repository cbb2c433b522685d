/**
 * Per-account settings received from an agent, from the protocol's shape (`AccountSettings` of the
 * .proto, every field present) to the table's (the keys of `kubernetes.accounts[]`, defaults left
 * out). The other way is `accountSettingsMessage()` in shared/protocol/settings.ts.
 */
import * as v from 'valibot';
import { accountSettingsSchema, type AccountSettings } from '../shared/accounts/schema.ts';
import { issuePath } from '../shared/accounts/validate.ts';
import type { AccountSettings__Output, Hello__Output } from '../shared/protocol/messages.ts';

/** The table's shape of a setting block received from an agent, with default values left out. */
export function settingsFromProto(name: string, s: AccountSettings__Output | null): Record<string, unknown> {
  const out: Record<string, unknown> = { name };
  if (s === null) return out;
  const set = (key: string, value: unknown, keep: boolean) => {
    if (keep) out[key] = value;
  };
  set('context', s.context, s.context !== '');
  set('serviceAccount', true, s.serviceAccount);
  set('insecure', true, s.insecure);
  set('noProxy', true, s.noProxy);
  set('oAuthScopes', s.oAuthScopes, s.oAuthScopes.length > 0);
  set('namespaces', s.namespaces, s.namespaces.length > 0);
  set('omitNamespaces', s.omitNamespaces, s.omitNamespaces.length > 0);
  set('onlyNamespacedResources', true, s.onlyNamespacedResources);
  set(
    'customResourceDefinitions',
    s.customResourceDefinitions.map((c) => ({ kind: c.kind, scope: c.scope === '' ? 'Namespaced' : c.scope })),
    s.customResourceDefinitions.length > 0,
  );
  set('kinds', s.kinds, s.kinds.length > 0);
  set('omitKinds', s.omitKinds, s.omitKinds.length > 0);
  set('clusterScopedKinds', s.clusterScopedKinds, s.clusterScopedKinds.length > 0);
  set('metrics', true, s.metrics);
  set('maxResumableResourceAgeMs', s.maxResumableResourceAgeMs, s.maxResumableResourceAgeMs > 0);
  const read = s.permissions?.read ?? [];
  const write = s.permissions?.write ?? [];
  set('permissions', [...(read.length > 0 ? [{ READ: read }] : []), ...(write.length > 0 ? [{ WRITE: write }] : [])], read.length + write.length > 0);
  return out;
}

/**
 * The static accounts of a hello that can be recorded. One the table cannot hold (a name outside
 * the account name rules, say) is left out and reported through `refuse`, so that one bad entry in
 * an agent's file does not keep the agent from connecting.
 */
export function staticAccountsOf(hello: Hello__Output, refuse: (problem: string) => void): AccountSettings[] {
  const out: AccountSettings[] = [];
  hello.staticAccounts.forEach((a, i) => {
    const result = v.safeParse(accountSettingsSchema, settingsFromProto(a.name, a.settings));
    if (result.success) {
      out.push(result.output);
      return;
    }
    const problems = result.issues.map((issue) => `${issuePath(issue) || '(account)'} ${issue.message}`).join('; ');
    refuse(`static account ${JSON.stringify(a.name.slice(0, 80))} (hello.staticAccounts[${i}]) left out: ${problems}`);
  });
  return out;
}
