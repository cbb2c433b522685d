/** Who is calling the API, once authenticated. */
export interface Caller {
  /** How the caller proved who they are. */
  via: 'admin-token' | 'oidc';
  /** The token's `sub`, or `admin-token`; for logs, and (with `via`) the scope of Idempotency-Keys. */
  subject: string;
  /** Role names from the configured claim of the token (empty for the admin token). */
  roles: ReadonlySet<string>;
  /**
   * The admin token holder, or a holder of a configured account-manager role: may register, activate
   * and remove accounts, and read and write every account whatever its permissions.
   */
  manager: boolean;
  /**
   * May write to accounts whose permissions grant everyone (none listed, or not applied): true for
   * managers, and for everyone when `api.auth.openAccounts` is `readWrite`.
   */
  writesOpenAccounts: boolean;
}

/** The Hono environment of every authenticated route: the caller is set before any handler runs. */
export interface ApiEnv {
  Variables: { caller: Caller };
}

/**
 * Who a caller is for what it owns (its Idempotency-Keys, docs/operations.md): how it authenticated
 * and its subject, so the admin token and an OIDC token whose `sub` is `admin-token` are two callers.
 */
export function callerScope(caller: Caller): string {
  return `${caller.via}:${caller.subject}`;
}
