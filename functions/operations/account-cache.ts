/**
 * The account records that authorize and check operations, kept in this API process for
 * `ACCOUNT_CACHE_MS` after a strongly consistent read, so a POST needs no table read before its one
 * write (docs/operations.md, "Authorization"). Only what lets a request through may be stale: a
 * request that a kept record would refuse (403, 404, 409, 400 for the account's restrictions) is
 * decided again on a fresh read. So a role, permission or restriction just granted applies at once,
 * and one just taken away applies within `ACCOUNT_CACHE_MS` — the same race a request that read the
 * account a moment before the change has, made at most one second wider.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { Permission } from '../../shared/accounts/permissions.ts';
import { MAX_NAME_LENGTH } from '../../shared/accounts/settings.ts';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { assertAccountAccess, hasAccountAccess, type IgnoredPermissionsLog } from '../auth/access.ts';
import type { Caller } from '../auth/caller.ts';

/** How long a read account stands for its item in the table. */
export const ACCOUNT_CACHE_MS = 1000;
/** Accounts kept at most; the one read from the table longest ago goes first. */
export const ACCOUNT_CACHE_SIZE = 10_000;

export interface CachedAccount {
  record: AccountRecord;
  /** Read from the table for this request (not kept from an earlier one). */
  fresh: boolean;
}

export class AccountCache {
  readonly #table: TableRef;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #size: number;
  readonly #entries = new Map<string, { record: AccountRecord; at: number }>();
  readonly #reading = new Map<string, Promise<AccountRecord | undefined>>();

  constructor(table: TableRef, clock: Clock, options: { ttlMs?: number; size?: number } = {}) {
    this.#table = table;
    this.#clock = clock;
    this.#ttlMs = options.ttlMs ?? ACCOUNT_CACHE_MS;
    this.#size = options.size ?? ACCOUNT_CACHE_SIZE;
  }

  /** The account as kept, or as read now when it is not kept or older than the cache's time; undefined when there is none. */
  async get(name: string): Promise<CachedAccount | undefined> {
    const kept = this.#entries.get(name);
    if (kept !== undefined && this.#clock.now() - kept.at < this.#ttlMs) return { record: kept.record, fresh: false };
    const record = await this.fresh(name);
    return record === undefined ? undefined : { record, fresh: true };
  }

  /** Reads the account now (strongly consistent), keeps it, and answers it. Reads of one name at once share one. */
  fresh(name: string): Promise<AccountRecord | undefined> {
    const pending = this.#reading.get(name);
    if (pending !== undefined) return pending;
    const at = this.#clock.now();
    const read = getAccount(this.#table, name, { consistent: true })
      .then((record) => {
        this.#entries.delete(name);
        if (record === undefined) return undefined;
        if (this.#entries.size >= this.#size) this.#entries.delete(this.#entries.keys().next().value as string);
        this.#entries.set(name, { record, at });
        return record;
      })
      .finally(() => this.#reading.delete(name));
    this.#reading.set(name, read);
    return read;
  }
}

/**
 * The account `name`, once the caller is found to hold `permission` on it (404 when there is no such
 * account, 403 when the caller may not). A kept record that would refuse is read again first;
 * `fresh`: read it again in any case (a kept one refused something else).
 */
export async function authorizedAccount(
  accounts: AccountCache,
  caller: Caller,
  name: string,
  permission: Permission,
  permissionsLog?: IgnoredPermissionsLog,
  fresh = false,
): Promise<CachedAccount> {
  const notFound = () => new VendorError('not_found', `no account named "${name.slice(0, MAX_NAME_LENGTH)}"`);
  const valid = name.length > 0 && name.length <= MAX_NAME_LENGTH;
  const read = !valid ? undefined : fresh ? await accounts.fresh(name) : undefined;
  const kept = !valid ? undefined : fresh ? (read === undefined ? undefined : { record: read, fresh: true }) : await accounts.get(name);
  if (kept === undefined) throw notFound();
  let account = kept;
  if (!kept.fresh && !hasAccountAccess(caller, kept.record, permission)) {
    const record = await accounts.fresh(name);
    if (record === undefined) throw notFound();
    account = { record, fresh: true };
  }
  permissionsLog?.note(account.record);
  assertAccountAccess(caller, account.record, permission);
  return account;
}
