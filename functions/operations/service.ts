import * as v from 'valibot';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { toAccount } from '../../shared/accounts/view.ts';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { requestIssues } from '../../shared/operations/check.ts';
import type { OperationEvents, OperationReservation } from '../../shared/operations/events.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import { requestHash } from '../../shared/operations/hash.ts';
import { isFinished, type OperationRecord } from '../../shared/operations/model.ts';
import { parseOperationRequest, requestObjects, type OperationRequest } from '../../shared/operations/request.ts';
import type { AccountRestrictions } from '../../shared/operations/rules.ts';
import type { IgnoredPermissionsLog } from '../auth/access.ts';
import { callerScope, type Caller } from '../auth/caller.ts';
import { authorizedAccount, type AccountCache, type CachedAccount } from './account-cache.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { compress, createOperation, getOperation, isOperationId, operationIdOf, storedApart, type NewOperation } from '../../shared/table/operations/operations.ts';
import type { OperationView } from '../../shared/answers/operations.ts';
import { toOperationView } from './view.ts';
import type { WakeSender } from '../wake/sender.ts';
import type { AnsweredOperation } from '../../shared/wake/result-answer.ts';

export interface OperationDeps {
  table: TableRef;
  clock: Clock;
  /** The accounts that authorize operations, kept briefly (account-cache.ts). */
  accounts: AccountCache;
  /** Present when a driver runs in the same process: wakes its dispatcher and answers waiting GETs. */
  events?: OperationEvents | undefined;
  permissionsLog?: IgnoredPermissionsLog;
  /** Wakes the replicas holding the account's agents when an operation is queued (docs/protocol.md#6b-wakes). */
  wakes?: WakeSender | undefined;
}

/** A stored request must leave room in its 400 KB item; compressed manifests rarely come near. */
export const MAX_STORED_REQUEST_BYTES = 350 * 1024;
/** Longest `wait` of a GET or POST, in seconds. */
export const MAX_WAIT_SECONDS = 60;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

// Visible ASCII, spaces inside only: what fits a header and a table key without surprises.
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * The request's `Idempotency-Key`: required, 1–255 visible ASCII characters. A quoted value (the
 * structured-field string form) is unquoted, so `"abc"` and `abc` are the same key.
 */
export function idempotencyKeyOf(header: string | undefined): string {
  const raw = header?.trim() ?? '';
  const key = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (key === '') {
    throw new VendorError('invalid_input', `the ${IDEMPOTENCY_HEADER} header is required: a unique value per operation, sent again unchanged when the request is retried`, {
      issues: [{ path: IDEMPOTENCY_HEADER, message: 'is required' }],
    });
  }
  if (!KEY_PATTERN.test(key)) {
    throw new VendorError('invalid_input', `the ${IDEMPOTENCY_HEADER} header must be 1 to 255 visible ASCII characters`, {
      issues: [{ path: IDEMPOTENCY_HEADER, message: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
  return key;
}

const restrictionsSchema = v.object({
  namespaces: v.optional(v.array(v.string())),
  onlyNamespacedResources: v.optional(v.boolean()),
  customResourceDefinitions: v.optional(v.array(v.object({ kind: v.string(), scope: v.optional(v.string()) }))),
  clusterScopedKinds: v.optional(v.array(v.string())),
});

function restrictionsOf(config: Record<string, unknown>): AccountRestrictions {
  // The settings were validated when their source was loaded; this only narrows the type.
  return v.parse(restrictionsSchema, config);
}

/** Refuses (409, 400) a request the account cannot take: not served by agents, or outside its restrictions. */
function admit(record: AccountRecord, request: OperationRequest, paths: readonly string[]): void {
  const account = toAccount(record);
  if (account.source === 'driver' && account.state !== 'ACTIVE') {
    throw new VendorError('conflict', `account "${account.name}" is not served by agents (state ${account.state ?? 'not registered'}); register and activate it first`, {
      details: { account: account.name },
    });
  }
  const issues = requestIssues(request, paths, restrictionsOf(account.config));
  if (issues.length > 0) {
    throw new VendorError('invalid_input', `the operation is not allowed on account "${account.name}": ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
}

/**
 * A reservation asked of a replica in another process (functions/wake/reserver.ts): only with wakes,
 * no dispatcher in this process (it alone is asked then), and a request stored inline (the replica
 * sends what the ask carries; a larger one is read from the table by the claim).
 */
async function remoteReservation(deps: OperationDeps, account: AccountRecord, id: string, input: NewOperation): Promise<OperationReservation | undefined> {
  if (deps.wakes === undefined || deps.events?.dispatching === true || storedApart(input.request)) return undefined;
  const { request, dispatch: _dispatch, ...rest } = input;
  return deps.wakes.reservations.reserve([{ zone: account.registration?.zoneId, agents: Object.keys(account.agents) }], id, { ...rest, request: Buffer.from(request).toString('base64') });
}

/**
 * POST: validates the request against the account (the caller's WRITE access checked by the route
 * with `authorizedAccount`), stores it as an operation (once per idempotency key: queued, or already
 * handed out to an agent a driver in this process or a replica asked sets aside), and answers it. `created` is false when the
 * key already stood for it. A kept account record that refuses the request is read again first.
 */
export async function submitOperation(
  deps: OperationDeps,
  caller: Caller,
  authorized: CachedAccount,
  key: string,
  body: unknown,
  beforeStore?: () => void,
): Promise<{ record: OperationRecord; created: boolean }> {
  const { request, paths } = parseOperationRequest(body);
  let record = authorized.record;
  try {
    admit(record, request, paths);
  } catch (refusal) {
    if (authorized.fresh) throw refusal;
    record = (await authorizedAccount(deps.accounts, caller, record.name, 'WRITE', deps.permissionsLog, true)).record;
    admit(record, request, paths);
  }
  const account = toAccount(record);
  const compressed = compress(request);
  if (compressed.length > MAX_STORED_REQUEST_BYTES) {
    throw new VendorError('payload_too_large', `the operation is too large to store (${compressed.length} bytes compressed, at most ${MAX_STORED_REQUEST_BYTES}); split it into several operations`);
  }
  const now = deps.clock.now();
  const submittedBy = callerScope(caller);
  const id = operationIdOf(account.name, submittedBy, key);
  const input: NewOperation = {
    account: account.name,
    submittedBy,
    idempotencyKey: key,
    requestHash: requestHash(account.name, request),
    request: compressed,
    record: { action: request.action, objects: requestObjects(request).length, ...(request.timeoutSeconds === undefined ? {} : { timeoutMs: request.timeoutSeconds * 1000 }) },
    now,
  };
  // A driver in this process, or a replica of the account's agents asked over the network: the
  // operation is stored handed out to the agent it sets aside.
  const local = deps.events?.reserve(id, account.name, now);
  const reservation = local ?? (await remoteReservation(deps, record, id, input));
  // Told as soon as the operation's own put has won, while its entries are still on their way: an
  // operation handed out goes to its agent now, since the item is what its result is written to
  // (docs/operations.md#handed-out-at-creation).
  let won: OperationRecord | undefined;
  const stored = (op: OperationRecord) => {
    won = op;
    if (reservation === undefined) return;
    pathTrace?.('api.store_answered', id);
    // Its result is recorded in this process: a waiting GET hears it here.
    if (local !== undefined) deps.events?.handedOut(op);
    reservation.handOut({ record: op, request });
  };
  // Stored in the queue: a driver in this process, or the replicas of the account's agents, claim it
  // now (the wake names it) instead of at their next poll.
  const announceQueued = (op: OperationRecord) => {
    deps.events?.queued({ record: op, request });
    deps.wakes?.wake('operations', [{ zone: record.registration?.zoneId, agents: Object.keys(record.agents) }], {
      id: op.id,
      account: op.account,
      ...(storedApart(compressed) ? { requestHash: op.requestHash } : {}),
    });
  };
  let outcome: { record: OperationRecord; created: boolean };
  beforeStore?.();
  pathTrace?.('api.store_sent', id);
  try {
    outcome = await createOperation(deps.table, { ...input, dispatch: reservation?.dispatch }, stored);
  } catch (e) {
    // Nothing once handed out: the operation is stored and on its way.
    reservation?.release();
    // The operation stands although its entries may not (no pass would find it): a queued one is
    // announced all the same, so it runs rather than waiting for a retry of the request.
    if (won !== undefined && reservation === undefined) announceQueued(won);
    throw e;
  }
  if (reservation === undefined) pathTrace?.('api.store_answered', id);
  if (!outcome.created) reservation?.release();
  else if (reservation === undefined) announceQueued(outcome.record);
  return outcome;
}

/**
 * How long to wait before reading an operation someone waits for again. With news of its result on
 * the way (a driver in this process, or a replica answering the result ask) the reads are only a
 * fallback, once a second. Without: every 25 ms for the first second (where a replica polling the
 * queue every 250 ms hands nearly every operation out and it finishes), every 50 ms until two
 * seconds, every 250 ms until five, then every second (docs/operations.md#waiting-for-the-result).
 */
function pollStep(waitedMs: number, news: boolean): number {
  if (news || waitedMs >= 5000) return 1000;
  if (waitedMs >= 2000) return 250;
  return waitedMs >= 1000 ? 50 : 25;
}

/**
 * What a waiting request may hear before its next read: the finished operation (this process, or a
 * replica's signed answer), "read it now" (a replica), or that no news will come.
 */
type ResultNews = { record: AnsweredOperation } | 'finished' | 'lost';

/**
 * The news of operation `id`'s result a replica in another process gives (functions/wake/result-asker.ts),
 * asked of the replicas of the live agents of its account `accountName`; undefined without wakes.
 */
async function askedNews(deps: OperationDeps, accountName: string, id: string, waitMs: number, signal: AbortSignal): Promise<{ news: Promise<ResultNews> } | undefined> {
  const asker = deps.wakes?.results;
  if (asker === undefined) return undefined;
  // The request has read the account to authorize the caller: usually kept, no read here.
  const account = await deps.accounts.get(accountName).catch(() => undefined);
  if (account === undefined) return undefined;
  const replicas = await asker.replicasOf([{ zone: account.record.registration?.zoneId, agents: Object.keys(account.record.agents) }]);
  // None takes asks (wakes off on the replicas): the table alone, on the tight schedule.
  if (replicas.length === 0) return undefined;
  // Wrapped: an async function would otherwise wait for the answer itself.
  return { news: asker.listen(id, replicas, waitMs, signal) };
}

/**
 * News of the result, as `askedNews` gives it, asked as the operation's store goes out: where the
 * account is known before the store (a POST), the replicas take the ask while the store is on its
 * way rather than while they claim the operation. An ask carries nothing the replica acts on but the
 * id it waits for, so one sent for an operation that is never stored (the store failed, the request
 * was a replay) only waits until the request ends.
 */
interface EarlyAsk {
  account: string;
  started?: Promise<{ news: Promise<ResultNews> } | undefined>;
}

async function waitFinished(
  deps: OperationDeps,
  op: OperationRecord,
  waitMs: number,
  signal: AbortSignal,
  notified: Promise<OperationRecord | undefined> | undefined,
  early: EarlyAsk | undefined,
): Promise<AnsweredOperation> {
  const started = deps.clock.now();
  const deadline = started + waitMs;
  let news: Promise<ResultNews> | undefined =
    notified === undefined ? (await (early?.started ?? askedNews(deps, op.account, op.id, waitMs, signal)))?.news : notified.then((record) => (record === undefined ? 'lost' : { record }));
  let current = op;
  while (!isFinished(current.state)) {
    const left = deadline - deps.clock.now();
    if (left <= 0 || signal.aborted) return current;
    const pause = Math.min(left, pollStep(deps.clock.now() - started, news !== undefined));
    const heard = await Promise.race([deps.clock.sleep(pause, signal).then(() => undefined, () => undefined), ...(news === undefined ? [] : [news])]);
    if (heard !== undefined && heard !== 'finished' && heard !== 'lost') return heard.record;
    // Told to read now, or told no news will come: either way the table decides, and polls from here.
    if (heard !== undefined) news = undefined;
    current = (await getOperation(deps.table, op.id)) ?? current;
  }
  deps.events?.forget(op.id);
  return current;
}

/**
 * The operation `read` answers; with `waitSeconds`, once it has finished or that long has passed. News
 * of its result is listened for before `read` starts, so a result stored meanwhile is not missed.
 */
async function untilFinished(
  deps: OperationDeps,
  id: string,
  waitSeconds: number,
  signal: AbortSignal,
  read: (askEarly: () => void) => Promise<OperationRecord>,
  earlyAccount?: string,
): Promise<AnsweredOperation> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const notified = waitSeconds > 0 ? deps.events?.waitFinished(id, stop.signal) : undefined;
  const early: EarlyAsk | undefined = waitSeconds > 0 && notified === undefined && earlyAccount !== undefined ? { account: earlyAccount } : undefined;
  const askEarly = () => {
    // On the next turn of the event loop: the store's requests are written first, and the ask's own
    // work overlaps the table's rather than holding them back.
    // A request already answered by then (a replay of a finished operation) asks nobody.
    if (early !== undefined && early.started === undefined) {
      early.started = new Promise((resolve) => setImmediate(resolve)).then(() => (stop.signal.aborted ? undefined : askedNews(deps, early.account, id, waitSeconds * 1000, stop.signal)));
    }
  };
  try {
    const op = await read(askEarly);
    return waitSeconds > 0 && !isFinished(op.state) ? await waitFinished(deps, op, waitSeconds * 1000, stop.signal, notified, early) : op;
  } finally {
    stop.abort();
    signal.removeEventListener('abort', onAbort);
  }
}

/** POST with `wait`: stores the operation as `submitOperation` does, then answers it once finished or after `waitSeconds`. */
export async function submitAndWait(
  deps: OperationDeps,
  caller: Caller,
  authorized: CachedAccount,
  key: string,
  body: unknown,
  waitSeconds: number,
  signal: AbortSignal,
): Promise<{ record: AnsweredOperation; created: boolean }> {
  let created = false;
  const id = operationIdOf(authorized.record.name, callerScope(caller), key);
  pathTrace?.('api.submit', id);
  const record = await untilFinished(
    deps,
    id,
    waitSeconds,
    signal,
    async (askEarly) => {
      const submitted = await submitOperation(deps, caller, authorized, key, body, askEarly);
      created = submitted.created;
      return submitted.record;
    },
    authorized.record.name,
  );
  return { record, created };
}

/**
 * GET: the operation; with `waitSeconds`, once it has finished or that long has passed. Callers who
 * may read its account may read it; to anyone else it does not exist (404, as for an unknown id).
 */
export async function getOperationView(deps: OperationDeps, caller: Caller, id: string, waitSeconds: number, signal: AbortSignal): Promise<OperationView> {
  const notFound = new VendorError('not_found', `no operation with id "${id.slice(0, 64)}"`);
  if (!isOperationId(id)) throw notFound;
  const op = await untilFinished(deps, id, waitSeconds, signal, async () => {
    // Handed out by this process and not finished here: its result comes here, no need to read it first.
    const found = (waitSeconds > 0 ? deps.events?.handedOutHere(id) : undefined) ?? (await getOperation(deps.table, id));
    if (found === undefined) throw notFound;
    if (!caller.manager) {
      // Not found, to someone who may not read its account, as an unknown id.
      await authorizedAccount(deps.accounts, caller, found.account, 'READ', deps.permissionsLog).catch(() => {
        throw notFound;
      });
    }
    return found;
  });
  return toOperationView(op);
}
