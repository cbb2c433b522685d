import type { MiddlewareHandler } from 'hono';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { accountAccess, grants, type Permission } from '../../shared/accounts/permissions.ts';
import { MAX_NAME_LENGTH } from '../../shared/accounts/settings.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import type { ApiEnv, Caller } from './caller.ts';

/**
 * Authorization of API callers against accounts (docs/api.md, Authorization). Managers (the admin
 * token, or a configured account-manager role) may do everything. Otherwise an account's served
 * definition decides: without permissions, or with a role name containing whitespace, every
 * authenticated caller may read it, and write it unless `api.auth.openAccounts` is `readOnly`; else
 * reading needs one of its READ or WRITE roles and writing one of its WRITE roles.
 */
export function hasAccountAccess(caller: Caller, record: Pick<AccountRecord, 'defs'>, permission: Permission): boolean {
  if (caller.manager) return true;
  const access = accountAccess(record);
  if (access.kind !== 'restricted' && permission === 'WRITE') return caller.writesOpenAccounts;
  return grants(access, caller.roles, permission);
}

/** May the caller see this account (GET, its resources and metrics)? */
export function canRead(caller: Caller, record: Pick<AccountRecord, 'defs'>): boolean {
  return hasAccountAccess(caller, record, 'READ');
}

/** Throws `forbidden` (403) unless the caller holds `permission` on the account. */
export function assertAccountAccess(caller: Caller, record: AccountRecord, permission: Permission): void {
  if (!hasAccountAccess(caller, record, permission)) {
    const open = accountAccess(record).kind !== 'restricted';
    throw new VendorError(
      'forbidden',
      open
        ? `not allowed to write to account "${record.name}": it lists no usable permissions, so only account managers may write to it (api.auth.openAccounts is readOnly)`
        : `not allowed to ${permission === 'READ' ? 'read' : 'write to'} account "${record.name}"`,
    );
  }
}

/** Route guard for registering, activating and removing accounts: managers only (403 otherwise). */
export function requireManager(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (!c.get('caller').manager) throw new VendorError('forbidden', 'managing accounts needs an account-manager role');
    await next();
  };
}

/** The Hono environment of a route behind `requireAccountAccess`: the account it checked is in `account`. */
export interface AccountAccessEnv {
  Variables: ApiEnv['Variables'] & { account: AccountRecord };
}

/**
 * Route guard for routes under one account (`/vendor/accounts/:accountId/...`): reads the account
 * named by the path parameter (404 when there is none), checks the caller holds `permission` on it
 * (403 otherwise) and leaves it in `c.get('account')` for the handler. Use `'READ'` for resources and
 * metrics, `'WRITE'` for operations; writes are authorized on a strongly consistent read.
 */
export function requireAccountAccess(
  deps: { table: TableRef; permissionsLog?: IgnoredPermissionsLog },
  permission: Permission,
  param = 'accountId',
): MiddlewareHandler<AccountAccessEnv> {
  return async (c, next) => {
    const name = c.req.param(param) ?? '';
    const record = name.length > 0 && name.length <= MAX_NAME_LENGTH ? await getAccount(deps.table, name, { consistent: permission === 'WRITE' }) : undefined;
    if (record === undefined) throw new VendorError('not_found', `no account named "${name.slice(0, MAX_NAME_LENGTH)}"`);
    deps.permissionsLog?.note(record);
    assertAccountAccess(c.get('caller'), record, permission);
    c.set('account', record);
    await next();
  };
}

/**
 * Warns, once per account and reason in this process, that an account's permissions are not applied
 * because a role name contains whitespace: every caller may read it (and write, with `openAccounts: readWrite`).
 */
export class IgnoredPermissionsLog {
  readonly #logger: Logger;
  readonly #warned = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  note(record: Pick<AccountRecord, 'name' | 'defs'>): void {
    const access = accountAccess(record);
    if (access.kind !== 'ignored') return;
    const key = `${record.name}\u0000${access.reason}`;
    if (this.#warned.has(key)) return;
    // Bounded, so a table of many such accounts cannot grow it without end; a reset warns again.
    if (this.#warned.size >= 10_000) this.#warned.clear();
    this.#warned.add(key);
    this.#logger.warn({ account: record.name, reason: access.reason }, 'account permissions are NOT applied: it is open to every caller like an account without permissions');
  }
}
