import type { AccountRecord, DefinitionSettings } from './model.ts';
import { winningDefinition } from './precedence.ts';
import { hasWhitespace } from './settings.ts';

/** The two permission types (docs/agent-config.md#permissions). */
export type Permission = 'READ' | 'WRITE';

/**
 * Who may use an account, from the served definition's `permissions` (docs/api.md#authorization):
 * - `open`: no role is listed, so every authenticated caller may read it, and write to it unless the
 *   API's `api.auth.openAccounts` is `readOnly` (then managers only);
 * - `ignored`: a role name contains whitespace, so (docs/agent-config.md#permissions) the permissions are not applied and
 *   account is open in the same way; `reason` says which name;
 * - `restricted`: reading needs one of `read`, writing one of `write`. Whoever may write may also
 *   read: `read` already includes the `WRITE` roles.
 */
export type AccountAccess =
  | { kind: 'open' }
  | { kind: 'ignored'; reason: string }
  | { kind: 'restricted'; read: readonly string[]; write: readonly string[] };

/** Access from one definition's settings. */
export function accessOfSettings(settings: Pick<DefinitionSettings, 'permissions'> | undefined): AccountAccess {
  const entries = settings?.permissions ?? [];
  const writeOnly = entries.flatMap((p) => p.WRITE ?? []);
  const readOnly = entries.flatMap((p) => p.READ ?? []);
  const spaced = [...readOnly, ...writeOnly].find(hasWhitespace);
  if (spaced !== undefined) {
    return {
      kind: 'ignored',
      reason: `role name ${JSON.stringify(spaced)} contains whitespace, so the permissions of this account are not applied: like an account without permissions, every authenticated caller may read it, and write to it unless api.auth.openAccounts is readOnly`,
    };
  }
  if (readOnly.length + writeOnly.length === 0) return { kind: 'open' };
  const write = [...new Set(writeOnly)].sort();
  return { kind: 'restricted', read: [...new Set([...readOnly, ...writeOnly])].sort(), write };
}

/** Access of a stored account: the winning definition's permissions (docs/api.md#precedence). */
export function accountAccess(record: Pick<AccountRecord, 'defs'>): AccountAccess {
  return accessOfSettings(winningDefinition(record.defs)?.[1].settings);
}

/** Whether holding `roles` grants `permission` on an account with this access. */
export function grants(access: AccountAccess, roles: ReadonlySet<string>, permission: Permission): boolean {
  if (access.kind !== 'restricted') return true;
  return (permission === 'READ' ? access.read : access.write).some((role) => roles.has(role));
}
