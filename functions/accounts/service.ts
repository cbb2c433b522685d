import { VendorError, type Issue } from '../../shared/errors.ts';
import type { AccountRecord, Registration } from '../../shared/accounts/model.ts';
import { isDriverDefined } from '../../shared/accounts/precedence.ts';
import type { Account, AccountPage, ActivationRecord, RegistrationRecord } from '../../shared/accounts/schema.ts';
import { MAX_NAME_LENGTH } from '../../shared/accounts/settings.ts';
import { toAccount } from '../../shared/accounts/view.ts';
import type { Clock } from '../../shared/clock.ts';
import { grants } from '../../shared/accounts/permissions.ts';
import { readAccessIndex } from '../../shared/table/accounts/access.ts';
import { getAccount, getAccounts, mutateAccount, type AccountChanges } from '../../shared/table/accounts/records.ts';
import { listAccountPage, listVisibleAccountPage } from '../../shared/table/accounts/listing.ts';
import { listPrefixAccountPage } from '../../shared/table/accounts/name-prefix.ts';
import { listFacetPage } from '../../shared/table/accounts/facet-listing.ts';
import { facetOf, facetTag, followAccountFacets } from '../../shared/table/accounts/facets.ts';
import { filtersBeyondName, passes, type AccountFilters } from './filters.ts';
import { assertAccountAccess, canRead, type IgnoredPermissionsLog } from '../auth/access.ts';
import type { Caller } from '../auth/caller.ts';
import { ChangeAppender, appendChanges, type Change } from '../../shared/table/accounts/feed.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { liveSessions } from '../../shared/table/agents/sessions.ts';
import type { WakeSender } from '../wake/sender.ts';
import type { LiveZones } from './live-zones.ts';
import { runBounded } from '../../shared/table/core/bounded.ts';
import { cacheHasWriter, markCacheCleanup } from '../../shared/table/resources/cleanup.ts';

/** What the account operations need: the table, a clock (for timestamps and live sessions), and the warning log. */
export interface AccountDeps {
  table: TableRef;
  clock: Clock;
  permissionsLog: IgnoredPermissionsLog;
  /** Wakes the driver replicas of the zones whose feed entries a write appended (docs/protocol.md#6b-wakes). */
  wakes?: WakeSender | undefined;
  /** Zones an activation found live a moment ago (live-zones.ts); each activation reads the session items without it. */
  liveZones?: LiveZones | undefined;
}

/**
 * After the feed entries are written: the replicas of these accounts' zones (before and after the
 * write) read the feed now. A write of one account names it, and they settle it from its item without
 * reading the feed first (docs/protocol.md#6b-wakes).
 */
function wakeZones(deps: AccountDeps, records: readonly (AccountRecord | undefined)[]): void {
  if (deps.wakes === undefined || records.length === 0) return;
  const zones = new Set(records.map((r) => r?.registration?.zoneId));
  const names = new Set(records.flatMap((r) => (r === undefined ? [] : [r.name])));
  const [only] = names;
  deps.wakes.wake(
    'accounts',
    [...zones].map((zone) => ({ zone })),
    names.size === 1 && only !== undefined ? { account: only } : undefined,
  );
}

/** Writes of one batch run this many at a time. */
const WRITE_CONCURRENCY = 16;
/**
 * Activations of at most this many accounts (one BatchWriteItem of entries) append their feed entries
 * alongside the account writes; larger ones after each group of writes, so a replica does not read a
 * thousand entries whose writes are still on their way.
 */
const EARLY_FEED_MAX = 25;

/** The account as served; warns (once) when its permissions are not applied. */
function view(deps: AccountDeps, record: AccountRecord): Account {
  deps.permissionsLog.note(record);
  return toAccount(record);
}

/**
 * GET list: the accounts the caller may read that pass the filters, with `total` counting only those.
 * Managers may read everything. Anyone else first reads the access index (the accounts that restrict
 * reading, with their roles) for the names hidden from them. Unfiltered, the rank index's pages serve
 * (shared/table/accounts/listing.ts), leaving hidden names out when there are any; a name prefix alone
 * is a run of the rank index (shared/table/accounts/name-prefix.ts). Filters by state, zone or source,
 * or a prefix with hidden names, are pages of the facet index (shared/table/accounts/facet-listing.ts).
 * Each item is checked against its own definition too, since the indexes may trail a change by a moment.
 */
export async function listAccounts(
  deps: AccountDeps,
  caller: Caller,
  page: number,
  limit: number,
  filters: AccountFilters = {},
): Promise<AccountPage> {
  const hidden = await hiddenNames(deps, caller);
  const { records, total } =
    filtersBeyondName(filters) || (filters.namePrefix !== undefined && hidden.size > 0)
      ? await listFacetPage(deps.table, filters, page, limit, await facetsOf(deps, hidden))
      : filters.namePrefix !== undefined
        ? await listPrefixAccountPage(deps.table, filters.namePrefix, page, limit)
        : hidden.size === 0
          ? await listAccountPage(deps.table, page, limit)
          : await listVisibleAccountPage(deps.table, page, limit, hidden);
  return { items: records.filter((r) => canRead(caller, r) && passes(filters, toAccount(r))).map((r) => view(deps, r)), page, limit, total };
}

/** The accounts the caller may not read, from the access index (none for a manager, without a read). */
export async function hiddenNames(deps: Pick<AccountDeps, 'table'>, caller: Caller): Promise<Set<string>> {
  const hidden = new Set<string>();
  if (caller.manager) return hidden;
  for (const [name, read] of await readAccessIndex(deps.table)) {
    if (!grants({ kind: 'restricted', read, write: [] }, caller.roles, 'READ')) hidden.add(name);
  }
  return hidden;
}

/** The facet tag of each hidden account, to leave it out of the facet index's counts: one read per hidden account. */
export async function facetsOf(deps: Pick<AccountDeps, 'table'>, names: ReadonlySet<string>): Promise<Map<string, string>> {
  if (names.size === 0) return new Map();
  const found = await getAccounts(deps.table, [...names]);
  return new Map([...found.values()].map((r) => [r.name, facetTag(facetOf(r))]));
}

/** A name no source can define (too long for a name, or empty) is known to be absent without a read. */
function possibleName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_NAME_LENGTH;
}

/** GET by id: the account, when the caller may read it (403 otherwise, 404 when there is none). */
export async function getAccountView(deps: AccountDeps, caller: Caller, name: string): Promise<Account> {
  const record = possibleName(name) ? await getAccount(deps.table, name) : undefined;
  if (record === undefined) throw new VendorError('not_found', `no account named "${name.slice(0, MAX_NAME_LENGTH)}"`);
  assertAccountAccess(caller, record, 'READ');
  return view(deps, record);
}

function unknownAccounts(names: readonly string[], issues: Issue[]): VendorError {
  return new VendorError('unknown_account', `not defined in the driver service: ${names.join(', ')}`, {
    issues,
    details: { names },
  });
}

/** Every record whose name no driver source defines, as one error listing them all. */
function checkDriverDefined(batch: readonly { name: string }[], found: Map<string, AccountRecord>): void {
  const names: string[] = [];
  const issues: Issue[] = [];
  batch.forEach((rec, i) => {
    const record = found.get(rec.name);
    if (record === undefined || !isDriverDefined(record.defs)) {
      names.push(rec.name);
      issues.push({ path: `[${i}].name`, message: `"${rec.name}" is not an account defined in the driver service` });
    }
  });
  if (names.length > 0) throw unknownAccounts(names, issues);
}

function mergedRegistration(previous: Registration | undefined, rec: RegistrationRecord | ActivationRecord, now: number): Registration {
  const zoneId = rec.zoneId ?? previous?.zoneId;
  const kubeconfigFile = rec.kubeconfigFile ?? previous?.kubeconfigFile;
  return {
    ...(zoneId === undefined ? {} : { zoneId }),
    ...(kubeconfigFile === undefined ? {} : { kubeconfigFile }),
    at: previous?.at ?? now,
  };
}

function sameRegistration(a: Registration | undefined, b: Registration): boolean {
  return a !== undefined && a.zoneId === b.zoneId && a.kubeconfigFile === b.kubeconfigFile;
}

/**
 * Runs one decision per record and returns the resulting records, in batch order. The feed entry
 * `feed` gives for a written record is appended as soon as its group of 25 is written (ChangeAppender),
 * so the driver starts on the first accounts of a large batch while the rest are still written; a
 * record written before another one failed gets its entry too.
 *
 * `durable` hears the results once every record is written and every feed entry is in the table (the
 * moment the replicas can act: the wake goes then). The facet index follows the records after that:
 * nothing a replica does waits for it, so it is off the path from the request to the agents.
 */
async function applyBatch<T extends { name: string }>(
  deps: AccountDeps,
  batch: readonly T[],
  found: Map<string, AccountRecord>,
  decide: (record: AccountRecord, rec: T) => AccountChanges | undefined,
  feed: (result: { record: AccountRecord; changed: boolean }) => Change | undefined,
  durable: (results: readonly { record: AccountRecord; changed: boolean }[]) => void,
  alongside?: Promise<void>,
): Promise<{ record: AccountRecord; changed: boolean }[]> {
  const results: { record: AccountRecord; changed: boolean }[] = new Array(batch.length);
  const appender = new ChangeAppender(deps.table);
  let failure: { error: unknown } | undefined;
  try {
    await runBounded(
      batch.map((rec, i) => async () => {
        const { record, changed } = await mutateAccount(
          deps.table,
          rec.name,
          (current) => {
            // The source may have dropped the account since the batch was checked.
            if (current === undefined || !isDriverDefined(current.defs)) throw unknownAccounts([rec.name], [{ path: `[${i}].name`, message: 'no longer defined in the driver service' }]);
            return decide(current, rec);
          },
          () => deps.clock.now(),
          // The batch was just read strongly: the first attempt writes from that read.
          { ...(found.has(rec.name) ? { initial: found.get(rec.name) as AccountRecord } : {}) },
        );
        const result = { record: record as AccountRecord, changed };
        results[i] = result;
        const change = feed(result);
        if (change !== undefined) appender.add(change);
      }),
      WRITE_CONCURRENCY,
    );
  } catch (error) {
    failure = { error };
  }
  try {
    await Promise.all([appender.close(), alongside]);
    if (failure === undefined) durable(results);
  } catch (error) {
    failure ??= { error };
  }
  // Every record of the batch, changed or not, so that a retry repairs what a crash left behind.
  await followAccountFacets(deps.table, results.filter((r) => r !== undefined).map((r) => r.record));
  if (failure !== undefined) throw failure.error;
  return results;
}

/**
 * POST: registers driver-defined accounts for migration (`INACTIVE`), keeping `zoneId` and
 * `kubeconfigFile`. A re-POST updates what it gives and keeps the rest; an account already `ACTIVE`
 * stays active and is queued again so its agents get the new settings.
 */
export async function registerAccounts(deps: AccountDeps, batch: readonly RegistrationRecord[]): Promise<Account[]> {
  const found = await getAccounts(deps.table, batch.map((r) => r.name), { consistent: true });
  checkDriverDefined(batch, found);
  const now = deps.clock.now();
  const records = await applyBatch(
    deps,
    batch,
    found,
    (current, rec) => {
      const registration = mergedRegistration(current.registration, rec, now);
      if (sameRegistration(current.registration, registration)) return undefined;
      if (current.registration === undefined || current.state === undefined) {
        return { registration, state: 'INACTIVE', generation: current.generation + 1 };
      }
      return { registration, generation: current.generation + 1 };
    },
    ({ record, changed }) => (changed && record.state === 'ACTIVE' ? assignEntry(record, deps.clock.now()) : undefined),
    (results) => {
      const queued = results.filter((r) => r.changed && r.record.state === 'ACTIVE');
      wakeZones(deps, [...queued.map((r) => r.record), ...queued.map((r) => found.get(r.record.name))]);
    },
  );
  return records.map((r) => view(deps, r.record));
}

/**
 * PATCH: activates registered accounts. Each must be driver-defined (else 400 listing the names),
 * registered and `INACTIVE` or `FAILED` (else 409), and an agent session must be live in its zone, or
 * anywhere when it has no zone (else 409). Nothing is written unless the whole batch passes.
 */
export async function activateAccounts(deps: AccountDeps, batch: readonly ActivationRecord[]): Promise<Account[]> {
  const found = await getAccounts(deps.table, batch.map((r) => r.name), { consistent: true });
  checkDriverDefined(batch, found);
  const now = deps.clock.now();

  const conflicts: Issue[] = [];
  const zones = new Map<string | undefined, number[]>();
  batch.forEach((rec, i) => {
    const record = found.get(rec.name) as AccountRecord;
    const problem = activationProblem(record);
    if (problem !== undefined) conflicts.push({ path: `[${i}].name`, message: problem });
    const zoneId = rec.zoneId ?? record.registration?.zoneId;
    const indexes = zones.get(zoneId);
    if (indexes === undefined) zones.set(zoneId, [i]);
    else indexes.push(i);
  });
  if (conflicts.length > 0) {
    throw new VendorError('conflict', conflicts.map((c) => c.message).join('; '), { issues: conflicts });
  }

  // The zones not known live a moment ago are read together: one round trip, not one per zone.
  const unknown = [...zones].filter(([zoneId]) => deps.liveZones?.known(zoneId) !== true);
  const sessions = await Promise.all(unknown.map(([zoneId]) => liveSessions(deps.table, now, zoneId)));
  for (const [k, [zoneId, indexes]] of unknown.entries()) {
    const live = sessions[k] as Awaited<ReturnType<typeof liveSessions>>;
    deps.liveZones?.found(zoneId, now, live);
    deps.wakes?.remember(zoneId, live);
    if (live.length > 0) continue;
    const where = zoneId === undefined ? 'in any zone' : `in zone "${zoneId}"`;
    throw new VendorError('conflict', `no active agent session ${where}: an agent must be connected before accounts can be activated there`, {
      issues: indexes.map((i) => ({ path: `[${i}]`, message: `no active agent session ${where}` })),
      details: { zoneId: zoneId ?? null },
    });
  }

  // A small batch's entries go to the table alongside its writes, at the generations the writes are
  // about to give (one round trip before the wake instead of two in a row). An entry whose write then
  // fails, or has not landed when a replica reads it, is harmless: the replica acts on the account item
  // it reads, and reads an entry naming a later generation than the item again at its next poll
  // (driver/accounts/feed-reader.ts). A write that had to be retried gets its own entry after it.
  const early = batch.length <= EARLY_FEED_MAX ? batch.map((rec) => assignEntry({ ...(found.get(rec.name) as AccountRecord), generation: (found.get(rec.name) as AccountRecord).generation + 1 }, now)) : [];
  const announced = new Set(early.map((c) => `${c.name}#${c.generation}`));
  const alongside = early.length > 0 ? appendChanges(deps.table, early) : undefined;
  alongside?.catch(() => undefined); // awaited (and its failure thrown) by applyBatch
  const records = await applyBatch(
    deps,
    batch,
    found,
    (current, rec) => {
      const problem = activationProblem(current);
      if (problem !== undefined) throw new VendorError('conflict', problem);
      return {
        registration: mergedRegistration(current.registration, rec, now),
        state: 'ACTIVE',
        generation: current.generation + 1,
      };
    },
    // Stamped when the write held, not when the request began: a large batch takes longer to write
    // than the replicas' re-read window (docs/protocol.md#assignment-across-replicas).
    ({ record }) => (announced.has(`${record.name}#${record.generation}`) ? undefined : assignEntry(record, deps.clock.now())),
    (results) => wakeZones(deps, [...results.map((r) => r.record), ...found.values()]),
    alongside,
  );
  return records.map((r) => view(deps, r.record));
}

/**
 * Stamped when its account's write held, not when the request began: a replica reads the feed from
 * `clockSkewMs` behind the newest entry it saw, so the entries of a batch that takes longer than that
 * to write would fall behind the window and wait for the full reconcile.
 */
function assignEntry(record: AccountRecord, now: number): Change {
  return { name: record.name, action: 'assign', generation: record.generation, at: now };
}

function activationProblem(record: AccountRecord): string | undefined {
  if (record.registration === undefined) return `account "${record.name}" is not registered for migration; POST it first`;
  if (record.state === 'ACTIVE') return `account "${record.name}" is already ACTIVE`;
  return undefined;
}

/**
 * DELETE: takes a migrated account back from the agents: its registration and state go, and a
 * `remove` entry is queued for the driver. Deleting an account that is not migrated changes nothing
 * but still queues the removal, which is harmless and lets a retry finish an interrupted delete.
 */
export async function unregisterAccount(deps: AccountDeps, name: string): Promise<Account> {
  const current = possibleName(name) ? await getAccount(deps.table, name, { consistent: true }) : undefined;
  if (current === undefined || !isDriverDefined(current.defs)) {
    const shown = name.slice(0, MAX_NAME_LENGTH);
    throw unknownAccounts([shown], [{ path: 'accountName', message: `"${shown}" is not an account defined in the driver service` }]);
  }
  const now = deps.clock.now();
  // Taken back from the agents and announced by none, the account's cache has no writer left: its
  // cleanup is marked before the write, so a failed write leaves a marker the cleanup drops unworked.
  if (current.registration !== undefined && !cacheHasWriter({ ...current, registration: undefined })) {
    await markCacheCleanup(deps.table, name, now);
  }
  const [record] = await applyBatch(
    deps,
    [{ name }],
    new Map([[name, current]]),
    (cur) => (cur.registration === undefined && cur.state === undefined ? undefined : { registration: null, state: null, generation: cur.generation + 1 }),
    // Queued even when nothing changed, so a retry finishes an interrupted delete.
    ({ record: after }) => ({ name, action: 'remove', generation: after.generation, at: now }),
    (results) => wakeZones(deps, [current, results[0]?.record]),
  );
  return view(deps, (record as { record: AccountRecord }).record);
}
