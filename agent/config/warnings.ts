import { hasWhitespace } from '../../shared/accounts/settings.ts';
import { formatPath, type ConfigWarning } from '../../shared/config-report/problems.ts';

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Warnings about accepted values that do not do what they seem to: role names with whitespace, which
 * switch an account's permissions off (docs/agent-config.md#permissions).
 * Works on the raw file so it also speaks when the file has errors elsewhere.
 */
export function semanticWarnings(input: unknown): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  const kubernetes = isMapping(input) ? input['kubernetes'] : undefined;
  const accounts = isMapping(kubernetes) ? kubernetes['accounts'] : undefined;
  if (!Array.isArray(accounts)) return out;
  accounts.forEach((account: unknown, i) => {
    if (!isMapping(account)) return;
    const at = (...keys: (string | number)[]) => formatPath(['kubernetes', 'accounts', i, ...keys]);
    const name = typeof account['name'] === 'string' ? account['name'] : `#${i}`;
    const permissions = account['permissions'];
    if (!Array.isArray(permissions)) return;
    permissions.forEach((entry: unknown, p) => {
      if (!isMapping(entry)) return;
      for (const type of ['READ', 'WRITE'] as const) {
        const roles = entry[type];
        if (!Array.isArray(roles)) continue;
        roles.forEach((role: unknown, r) => {
          if (typeof role === 'string' && hasWhitespace(role)) {
            out.push({
              path: at('permissions', p, type, r),
              message: `role name ${JSON.stringify(role)} contains whitespace: PERMISSIONS OF ACCOUNT ${name} ARE NOT APPLIED and every user has access to it`,
            });
          }
        });
      }
    });
  });
  return out;
}
