/**
 * Dispatch of deployment operations on one driver replica (docs/operations.md, "Dispatch"). Each
 * replica reads the queue of open operations every `operations.pollIntervalMs` (and at once when the
 * API in the same process stores one, or an agent connects), and hands each operation whose account
 * an agent connected here holds to one such agent: it claims the operation with a conditional write
 * first, so two replicas never hand out the same attempt, then sends it. The API, in the same process
 * or in another through this replica's reservation asks (driver/wake/reservations.ts), asks for an
 * agent before it stores an operation (`reserve`) and stores it handed out to that agent, which then
 * gets it at once, without a claim. Results are written back here; the first one wins. An
 * operation whose stream ended before its result goes out again, to the same agent when it is back,
 * else after `redispatchAfterMs` to another holder; one whose replica is gone goes out again after
 * `orphanAfterMs`; one without a result by its deadline ends TIMED_OUT.
 */
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import type { LocalDispatcher, OperationEvents, OperationReservation, QueuedOperation } from '../../shared/operations/events.ts';
import { isVendorError, type ErrorCode } from '../../shared/errors.ts';
import { outcomeFromWire, operationMessage, reportOf, resultErrorCode } from '../../shared/operations/message.ts';
import { isFinished, queueEntryOf, type Dispatch, type ObjectOutcomeRecord, type OperationRecord, type QueueEntry } from '../../shared/operations/model.ts';
import type { OperationRequest } from '../../shared/operations/request.ts';
import type { OperationResult__Output } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import type { NamedOperation } from '../../shared/wake/message.ts';
import {
  claimWithRequest,
  compress,
  deleteFinishedQueueEntry,
  deleteQueueEntry,
  endDispatch,
  finishOperation,
  getOperation,
  getOperationWithRequest,
  openOperations,
  syncQueueEntry,
} from '../../shared/table/operations/operations.ts';
import { Waker } from '../../shared/waker.ts';
import { STORE_BACKOFF_MAX_MS, isStoreOutage, storeBackoff } from '../backoff.ts';
import { recordOpenOperations, recordOperationEnd } from '../metrics/record.ts';
import type { DriverMetrics } from '../metrics/metrics.ts';
import type { OperationsConfig } from './config.ts';
import type { AgentDirectory, LocalAgent } from './directory.ts';

/** A queue entry whose operation or request is still missing this long after it was made belongs to a POST that crashed. */
const ABANDONED_AFTER_MS = 60_000;
/** Outcomes must leave the operation item under DynamoDB's 400 KB; past this (compressed) their messages are shortened. */
const MAX_STORED_OUTCOMES_BYTES = 300 * 1024;
const SHORT_MESSAGE = 256;
/**
 * How long after a claim its queue entry is brought in step, unless the result came first (then the
 * entry is only deleted): most operations finish well within it, and each saves a write.
 */
export const ENTRY_SYNC_AFTER_MS = 1_000;

/** The outcomes as stored: their messages shortened when all of them would not fit the item. */
export function boundedOutcomes(outcomes: readonly ObjectOutcomeRecord[]): ObjectOutcomeRecord[] {
  // gzip adds at most a few bytes per 64 KB to what it cannot shrink: JSON this short fits without
  // compressing it here too (the finish compresses it for the item).
  if (Buffer.byteLength(JSON.stringify(outcomes)) <= MAX_STORED_OUTCOMES_BYTES - 1024 || compress(outcomes).length <= MAX_STORED_OUTCOMES_BYTES) return [...outcomes];
  return outcomes.map((o) => (o.message !== undefined && o.message.length > SHORT_MESSAGE ? { ...o, message: `${o.message.slice(0, SHORT_MESSAGE - 1)}…` } : o));
}

export interface DispatcherDeps {
  table: TableRef;
  clock: Clock;
  log: Logger;
  replicaId: string;
  directory: AgentDirectory;
  config: OperationsConfig;
  /** Operation news in this process: new operations come in here, finished ones go out. */
  events?: OperationEvents | undefined;
  metrics?: DriverMetrics | undefined;
}

export type OperationResultOutcome = 'recorded' | 'ignored';

interface InFlight {
  agentId: string;
  sessionId: string;
  account: string;
  /** 0 until the claim has set it. */
  attempt: number;
  /** When it was recorded, in the order of `#marks`: a read of the queue forgets only what it could have seen. */
  mark: number;
}

const REQUEST_MISSING = 'the request of this operation is not in the table; it was not run';
/** The table lost what the API wrote before the operation: the control plane's own fault, not the caller's request. */
const REQUEST_MISSING_CODE: ErrorCode = 'internal';

export class OperationDispatcher implements LocalDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #waker = new Waker();
  readonly #requests = new Map<string, OperationRequest>();
  /** Operations being looked at right now, so a pass and a fast hand-out never race on one. */
  readonly #busy = new Set<string>();
  /** Operations this replica handed out that have no result yet. */
  readonly #inFlight = new Map<string, InFlight>();
  #marks = 0;
  /** Hand-outs in progress, at most `operations.concurrency` at once; the rest wait their turn. */
  #active = 0;
  readonly #turns: (() => void)[] = [];
  readonly #launched = new Set<Promise<void>>();
  #passDue = true;
  #lastPass = -Infinity;
  /** Time between reads of the queue: `pollIntervalMs`, longer while reads keep failing. */
  #passEvery = 0;
  /** Claims whose queue entry is brought in step later (`#syncEntryLater`), by operation id. */
  readonly #entrySyncs = new Map<string, AbortController>();
  /** Aborts when `run` is told to stop: the entries waiting for their update get it at once. */
  #stopping: AbortSignal | undefined;
  /** Open operations the last read of the queue found (unknown, so counted as some, before the first). */
  #openAtLastRead = Infinity;
  /** A read of the queue is under way: what it finds is decided against holdings that may change meanwhile. */
  #reading = false;

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
  }

  /** Reads the queue at once (an agent connected, or a test wants it now). */
  wake(): void {
    this.#passDue = true;
    this.#waker.wake();
  }

  /**
   * An agent here has come to hold an account: an open operation of it that no agent here held may go
   * out now, so the queue is read at once, unless the last read found it empty and none is under way.
   * An operation stored since comes with its own wake, or the next poll finds it. An activation makes
   * every agent of a zone hold each account in turn: reading an empty queue (one Query per queue
   * shard) for each of them made most of a replica's queue reads then (docs/operations.md#dispatch).
   */
  holdingGained(): void {
    if (this.#reading || this.#openAtLastRead > 0) this.wake();
  }

  #track(id: string, f: Omit<InFlight, 'mark'>): void {
    this.#inFlight.set(id, { ...f, mark: ++this.#marks });
  }

  /**
   * Sets an agent of this replica that holds `account` aside for operation `id`, which the API (of
   * this process, or one that asked over the wake port) is about to store handed out to it (RUNNING,
   * attempt 1). A released reservation whose operation was stored anyway is the pass's to send: no
   * longer in flight here, its entry is one this replica did not send (`#resend`). Undefined when no agent here
   * holds the account, or the operation is being looked at already or in hand here (a concurrent
   * request with its key, or a retry).
   */
  reserve(id: string, account: string, now: number): OperationReservation | undefined {
    // In hand here already (a retry of its request): the retry finds it stored, and its release must
    // not make this replica forget that it sent it.
    if (this.#busy.has(id) || this.#inFlight.has(id)) return undefined;
    const agent = this.#leastLoaded(this.#deps.directory.holders(account));
    if (agent === undefined) return undefined;
    this.#busy.add(id);
    this.#track(id, { agentId: agent.agentId, sessionId: agent.id, account, attempt: 1 });
    const dispatch: Dispatch = { agentId: agent.agentId, sessionId: agent.id, replicaId: this.#deps.replicaId, at: now };
    let settled = false;
    const settle = () => {
      const first = !settled;
      settled = true;
      this.#busy.delete(id);
      return first;
    };
    return {
      dispatch,
      handOut: (op) => {
        if (settle()) this.#send(agent, op.record, op.request, true);
      },
      release: () => {
        if (settle() && this.#inFlight.get(id)?.sessionId === agent.id) this.#inFlight.delete(id);
      },
    };
  }

  /**
   * A wake named operation `named`, just queued by the API in another process: it is claimed at once
   * for an agent here that holds its account, without reading the queue first. The name says where
   * to look and nothing more: the claim's condition (QUEUED at attempt 0, of the named account)
   * decides. When no agent here holds the account, or the claim fails (another replica took it, it
   * finished, there is no such operation of that account), nothing is written and the queue is read
   * as for a wake without a name.
   */
  claimNamed(named: NamedOperation): void {
    const counted = (outcome: 'claimed' | 'busy' | 'not_held' | 'not_claimed') => this.#deps.metrics?.namedWakes.inc({ outcome });
    // Being decided already (a read of the queue found it): that decision stands.
    if (this.#busy.has(named.id)) return counted('busy');
    const toQueue = (outcome: 'not_held' | 'not_claimed', why: string) => {
      counted(outcome);
      this.#deps.log.debug({ operationId: named.id, account: named.account }, `named wake not used (${why}): reading the queue`);
      this.wake();
    };
    if (this.#deps.directory.holders(named.account).length === 0) return toQueue('not_held', 'no agent here holds the account');
    const entry: QueueEntry = { id: named.id, account: named.account, state: 'QUEUED', attempt: 0, createdAt: this.#deps.clock.now(), ...(named.requestHash === undefined ? {} : { requestHash: named.requestHash }) };
    let used = true;
    const unused = () => {
      used = false;
      toQueue('not_claimed', 'the claim did not hold, or its agent left first');
    };
    void this.#inTurn(named.id, async () => {
      await this.#dispatch(entry, undefined, undefined, true, unused);
      if (used) counted('claimed');
    });
  }

  /** Hands out a just-stored operation at once, without waiting for the next read of the queue. */
  queued(op: QueuedOperation): void {
    this.#requests.set(op.record.id, op.request);
    void this.#launch(queueEntryOf(op.record), undefined);
  }

  /** Runs until `signal` aborts, then waits for the hand-outs in progress. */
  async run(signal: AbortSignal): Promise<void> {
    this.#stopping = signal;
    const unsubscribe = this.#deps.events?.onQueued((op) => this.queued(op));
    const detach = this.#deps.events?.attach(this);
    const { clock, config, log } = this.#deps;
    const backoff = storeBackoff(config.pollIntervalMs, Math.max(config.pollIntervalMs, STORE_BACKOFF_MAX_MS));
    this.#passEvery = config.pollIntervalMs;
    try {
      while (!signal.aborted) {
        if (this.#passDue || clock.now() - this.#lastPass >= this.#passEvery) {
          this.#passDue = false;
          this.#lastPass = clock.now();
          try {
            await this.#pass();
            if (backoff.failures > 0) log.info({ failures: backoff.failures }, 'the operation queue is read again');
            backoff.succeeded();
            this.#passEvery = config.pollIntervalMs;
          } catch (err) {
            // Once per run of failures; while the table is gone the queue is read less and less often.
            if (backoff.failures === 0) log[isStoreOutage(err) ? 'warn' : 'error']({ err }, 'reading the operation queue failed');
            this.#passEvery = Math.max(config.pollIntervalMs, backoff.failed());
          }
        }
        const untilNextPass = this.#lastPass + this.#passEvery - clock.now();
        if (!this.#passDue && untilNextPass > 0) await this.#waker.wait(clock, untilNextPass, signal);
      }
    } finally {
      unsubscribe?.();
      detach?.();
      await Promise.allSettled([...this.#launched]);
    }
  }

  /** Decides about one open operation in its turn; never two decisions about one operation at once. */
  #launch(e: QueueEntry, live: ReadonlySet<string> | undefined): Promise<void> {
    return this.#inTurn(e.id, () => this.#handle(e, live));
  }

  /** Runs `work` on operation `id` in its turn, unless something is being decided about it already. */
  #inTurn(id: string, work: () => Promise<void>): Promise<void> {
    if (this.#busy.has(id)) return Promise.resolve();
    this.#busy.add(id);
    const run = (async () => {
      if (this.#active >= this.#deps.config.concurrency) await new Promise<void>((resolve) => this.#turns.push(resolve));
      this.#active++;
      try {
        await work();
      } catch (err) {
        this.#deps.log.error({ err, operationId: id }, 'dispatching an operation failed');
      } finally {
        this.#active--;
        this.#turns.shift()?.();
        this.#busy.delete(id);
      }
    })();
    this.#launched.add(run);
    void run.finally(() => this.#launched.delete(run));
    return run;
  }

  /** One read of the queue and a decision for every open operation. */
  async #pass(): Promise<void> {
    const { table, clock, config, directory, replicaId } = this.#deps;
    const seen = this.#marks;
    this.#reading = true;
    let entries: QueueEntry[];
    try {
      entries = await openOperations(table);
    } finally {
      this.#reading = false;
    }
    this.#openAtLastRead = entries.length;
    recordOpenOperations(this.#deps.metrics, entries);
    const now = clock.now();
    const open = new Set(entries.map((e) => e.id));
    // Hand-outs recorded after the read began may be of operations the read could not see yet.
    for (const [id, f] of this.#inFlight) if (!open.has(id) && f.mark <= seen) this.#inFlight.delete(id);
    // Requests handed over in this process for operations another replica finished.
    for (const id of this.#requests.keys()) if (!open.has(id) && !this.#busy.has(id)) this.#requests.delete(id);
    // Only read other replicas' sessions when one of their hand-outs is old enough to be suspect.
    const suspect = entries.some((e) => e.dispatch !== undefined && e.dispatch.replicaId !== replicaId && e.dispatch.endedAt === undefined && now - e.dispatch.at >= config.orphanAfterMs);
    const live = suspect ? await directory.liveSessionIds(now) : undefined;
    // Not waited for: a wake that comes while these claims are on their way gets its read of the queue
    // at once (an operation being handed out is busy, so the next read leaves it alone).
    for (const e of entries) void this.#launch(e, live);
  }

  #deadline(e: Pick<QueueEntry, 'createdAt' | 'timeoutMs'>): number {
    return e.createdAt + (e.timeoutMs ?? this.#deps.config.timeoutMs);
  }

  /** `fresh`: `e` was just made from the operation itself, not from a possibly stale queue entry. */
  async #handle(e: QueueEntry, live: ReadonlySet<string> | undefined, fresh = false): Promise<void> {
    const { clock, table, directory, replicaId, config } = this.#deps;
    const now = clock.now();
    // A result taken by this replica has its entry deleted by the result's own path (still in hand until then).
    if (isFinished(e.state)) return this.#inFlight.has(e.id) ? undefined : deleteQueueEntry(table, e.id);
    if (now >= this.#deadline(e)) return this.#timeOut(e, now);
    const mine = this.#inFlight.get(e.id);
    if (mine !== undefined && mine.attempt > e.attempt) {
      // The entry is behind a claim of ours whose update of it is deferred (#syncEntryLater): in hand
      // while its stream is open; else the operation itself decides.
      if (directory.isOpen(mine.sessionId)) return;
      return this.#repair(e, live, fresh);
    }
    const d = e.dispatch;
    if (e.state === 'QUEUED' || d === undefined) return this.#dispatch(e, undefined, live, fresh);
    let endedAt = d.endedAt;
    if (endedAt === undefined) {
      if (d.replicaId === replicaId) {
        // Ours and its stream is open: in hand, unless this replica never sent it (a write that
        // reported an error but was made, a stale entry).
        if (directory.isOpen(d.sessionId)) return this.#inFlight.has(e.id) ? undefined : this.#resend(e, d, live, fresh);
        // Our stream to the agent ended and nobody has said so in the table yet.
        endedAt = now;
        const ended = await endDispatch(table, e.id, e.attempt, now, `the stream to agent ${d.agentId} ended before its result`);
        if (ended === undefined) return this.#repair(e, live, fresh);
        await syncQueueEntry(table, ended);
      } else {
        // Another replica's hand-out: only when the stream it went out on is no longer live anywhere.
        if (live === undefined || now - d.at < config.orphanAfterMs || live.has(d.sessionId)) return;
        endedAt = d.at;
      }
    }
    // The same agent back on this replica gets it again at once (it never runs an id twice).
    const same = directory.holders(e.account).find((a) => a.agentId === d.agentId && a.id !== d.sessionId);
    if (same !== undefined) return this.#dispatch(e, same, live, fresh);
    if (now - endedAt < config.redispatchAfterMs) return;
    return this.#dispatch(e, undefined, live, fresh);
  }

  #leastLoaded(agents: readonly LocalAgent[]): LocalAgent | undefined {
    const load = new Map<string, number>();
    for (const { agentId } of this.#inFlight.values()) load.set(agentId, (load.get(agentId) ?? 0) + 1);
    let best: LocalAgent | undefined;
    for (const a of agents) if (best === undefined || (load.get(a.agentId) ?? 0) < (load.get(best.agentId) ?? 0)) best = a;
    return best;
  }

  /** `lost`: what a failed claim leads to; by default the entry is repaired from its operation. */
  async #dispatch(e: QueueEntry, preferred: LocalAgent | undefined, live: ReadonlySet<string> | undefined, fresh: boolean, lost?: () => void): Promise<void> {
    const { table, clock, replicaId, directory } = this.#deps;
    const agent = preferred ?? this.#leastLoaded(directory.holders(e.account));
    if (agent === undefined) return lost?.();
    // Counted at once, so hand-outs decided together spread over the holders.
    this.#track(e.id, { agentId: agent.agentId, sessionId: agent.id, account: e.account, attempt: 0 });
    const local = this.#requests.get(e.id);
    const now = clock.now();
    // Of the entry's account: a named wake's entry is made from the wake, and the claim checks it.
    pathTrace?.('replica.claim_sent', e.id);
    const claimed = await claimWithRequest(table, e.id, e.attempt, { agentId: agent.agentId, sessionId: agent.id, replicaId, at: now }, now, local === undefined, e.requestHash, e.account);
    pathTrace?.('replica.claim_answered', e.id);
    if (claimed === undefined) {
      this.#inFlight.delete(e.id);
      return lost === undefined ? this.#repair(e, live, fresh) : lost();
    }
    this.#requests.delete(e.id);
    const request = local ?? claimed.request;
    if (request === undefined) return this.#cannotRun(claimed.record, REQUEST_MISSING, REQUEST_MISSING_CODE);
    this.#send(agent, claimed.record, request, true);
  }

  /**
   * Sends operation `op`, handed out to `agent` in the table, and follows its delivery. `syncEntry`:
   * the queue entry is brought in step `ENTRY_SYNC_AFTER_MS` after the send unless the result comes
   * first: for a claim of this replica, and for an operation the API stored handed out to it, whose
   * entry the store may have failed to write while its put won (the entry is then put back, and the
   * operation times out or goes out again as any other); a resend, of an entry found in the queue, needs none.
   */
  #send(agent: LocalAgent, op: OperationRecord, request: OperationRequest, syncEntry: boolean): void {
    const { table, clock, log } = this.#deps;
    this.#track(op.id, { agentId: agent.agentId, sessionId: agent.id, account: op.account, attempt: op.attempt });
    let message: ReturnType<typeof operationMessage>;
    try {
      message = operationMessage(op.id, op.account, op.attempt, Math.max(1, this.#deadline(op) - clock.now()), request);
    } catch (err) {
      // `invalid_input`: the stored request is not one the wire carries as it is.
      const code = isVendorError(err) ? err.code : 'internal';
      void this.#cannotRun(op, err instanceof Error ? err.message : String(err), code).catch((e: unknown) => log.warn({ err: e, operationId: op.id }, 'operation not finished'));
      return;
    }
    this.#deps.metrics?.operationsHandedOut.inc();
    pathTrace?.('replica.operation_sent', op.id);
    // The agent may have stopped holding the account since it was chosen: it would ignore the operation.
    const delivered = this.#deps.directory.holders(op.account).some((a) => a.id === agent.id)
      ? agent.send({ kind: 'operation', body: message })
      : Promise.reject(new Error(`agent ${agent.agentId} no longer holds account ${op.account}`));
    // The log line (a synchronous write) comes on a later turn of the event loop, so it is not on the way to the agent.
    setImmediate(() => log.info({ operationId: op.id, account: op.account, agentId: agent.agentId, attempt: op.attempt, action: request.action }, 'operation handed out'));
    const synced = syncEntry ? this.#syncEntryLater(op, agent.id) : Promise.resolve();
    delivered.catch(async (err: unknown) => {
      // Not taken by the agent: the stream ended first. Say so (after the entry's own update, if under
      // way; a deferred one is dropped), so it goes out again.
      log.warn({ operationId: op.id, agentId: agent.agentId, err: err instanceof Error ? err.message : String(err) }, 'operation not delivered');
      if (this.#inFlight.get(op.id)?.sessionId === agent.id) this.#inFlight.delete(op.id);
      this.#entrySyncs.get(op.id)?.abort();
      await synced;
      const ended = await endDispatch(table, op.id, op.attempt, clock.now(), `the stream to agent ${agent.agentId} ended before it took the operation`).catch(() => undefined);
      if (ended !== undefined) await syncQueueEntry(table, ended).catch(() => undefined);
      this.wake();
    });
  }

  /**
   * Brings the queue entry of claimed operation `op` in step with it `ENTRY_SYNC_AFTER_MS` from now,
   * or at once when the dispatcher stops, if this replica's hand-out of it is still in flight by then.
   * Until then the entry says what it said before the claim: a read of the queue here leaves the
   * operation alone (`#handle`), and another replica's claim of it fails and repairs the entry from
   * the operation, as for any entry that lags its operation. A result recorded first drops the update
   * (the entry is deleted instead): one write fewer per operation.
   */
  #syncEntryLater(op: OperationRecord, sessionId: string): Promise<void> {
    const { table, clock, log } = this.#deps;
    const early = new AbortController();
    this.#entrySyncs.get(op.id)?.abort();
    this.#entrySyncs.set(op.id, early);
    const onStop = () => early.abort();
    if (this.#stopping?.aborted === true) early.abort();
    else this.#stopping?.addEventListener('abort', onStop, { once: true });
    const run = clock
      .sleep(ENTRY_SYNC_AFTER_MS, early.signal)
      .catch(() => undefined)
      .then(async () => {
        this.#stopping?.removeEventListener('abort', onStop);
        // Taken off the map by the result's write, or by a later hand-out of the same operation.
        const current = this.#entrySyncs.get(op.id) === early;
        if (current) this.#entrySyncs.delete(op.id);
        const f = this.#inFlight.get(op.id);
        if (!current || f === undefined || f.sessionId !== sessionId || f.attempt !== op.attempt) return;
        await syncQueueEntry(table, op);
      })
      .catch((err: unknown) => log.warn({ err, operationId: op.id }, 'queue entry not updated'));
    this.#keep(run);
    return run;
  }

  /** Background work the dispatcher waits for when it stops. */
  #keep(work: Promise<void>): void {
    this.#launched.add(work);
    void work.finally(() => this.#launched.delete(work));
  }

  /**
   * An operation handed out by this replica on a stream that is still open, that this replica has no
   * record of sending: send it again to the same agent (at the same attempt; the agent never runs an
   * id twice), if the operation says so too.
   */
  async #resend(e: QueueEntry, d: Dispatch, live: ReadonlySet<string> | undefined, fresh: boolean): Promise<void> {
    const { table } = this.#deps;
    const stored = await getOperationWithRequest(table, e.id);
    const op = stored?.record;
    const same = op !== undefined && op.state === 'RUNNING' && op.attempt === e.attempt && op.dispatch?.sessionId === d.sessionId && op.dispatch.endedAt === undefined;
    if (!same) return this.#repair(e, live, fresh);
    const request = stored?.request;
    if (request === undefined) return this.#cannotRun(op, REQUEST_MISSING, REQUEST_MISSING_CODE);
    const agent = this.#deps.directory.holders(e.account).find((a) => a.id === d.sessionId);
    if (agent === undefined) {
      // Its agent no longer holds the account: it goes out again.
      const ended = await endDispatch(table, e.id, e.attempt, this.#deps.clock.now(), `agent ${d.agentId} no longer holds account ${e.account}`);
      if (ended !== undefined) await syncQueueEntry(table, ended);
      this.wake();
      return;
    }
    this.#send(agent, op, request, false);
  }

  /** A claimed operation whose request cannot be sent (not in the table, or not one the wire carries) runs nowhere: it ends FAILED. */
  async #cannotRun(op: OperationRecord, message: string, errorCode: ErrorCode): Promise<void> {
    const { table, clock, log, events } = this.#deps;
    this.#inFlight.delete(op.id);
    log.error({ operationId: op.id, account: op.account, errorCode }, message);
    const done = await finishOperation(table, op.id, { state: 'FAILED', message, errorCode }, clock.now());
    if (done !== undefined) events?.finished(done);
    if (done !== undefined) recordOperationEnd(this.#deps.metrics, done, clock.now());
    await deleteQueueEntry(table, op.id);
  }

  /**
   * The queue entry disagrees with its operation: bring it in line, or drop it, and decide again from
   * the operation itself (once: a decision from fresh data that fails again waits for the next pass).
   */
  async #repair(e: QueueEntry, live?: ReadonlySet<string>, fresh = true): Promise<void> {
    const { table, clock } = this.#deps;
    const op = await getOperation(table, e.id);
    if (op === undefined) {
      if (clock.now() - e.createdAt >= ABANDONED_AFTER_MS) await deleteQueueEntry(table, e.id);
      return;
    }
    if (isFinished(op.state)) return deleteQueueEntry(table, e.id);
    await syncQueueEntry(table, op);
    if (!fresh) await this.#handle(queueEntryOf(op), live, true);
  }

  async #timeOut(e: QueueEntry, now: number): Promise<void> {
    const { table, log, events } = this.#deps;
    const limit = e.timeoutMs ?? this.#deps.config.timeoutMs;
    // The operation itself says where it was; its queue entry may not have caught up.
    const current = await getOperation(table, e.id);
    if (current === undefined || isFinished(current.state)) return this.#repair(e);
    const where =
      current.dispatch === undefined
        ? `no agent holding account ${e.account} took it`
        : `no result from agent ${current.dispatch.agentId} (handed out ${current.attempt} time${current.attempt === 1 ? '' : 's'})`;
    const message = `timed out after ${limit} ms: ${where}; a result that arrives later is ignored`;
    const op = await finishOperation(table, e.id, { state: 'TIMED_OUT', message, errorCode: 'timeout' }, now);
    if (op === undefined) return this.#repair(e);
    this.#inFlight.delete(e.id);
    log.warn({ operationId: e.id, account: e.account, attempt: op.attempt }, message);
    events?.finished(op);
    recordOperationEnd(this.#deps.metrics, op, now);
    await deleteQueueEntry(table, e.id);
  }

  /**
   * The agent of stream `sessionId` no longer holds `account` (removed, or it could not use it): what
   * this replica handed it for that account goes out again, since the agent will not run it.
   */
  async holdingLost(sessionId: string, account: string): Promise<void> {
    const { table, clock, log } = this.#deps;
    const lost = [...this.#inFlight].filter(([, f]) => f.sessionId === sessionId && f.account === account && f.attempt > 0);
    for (const [id, f] of lost) {
      this.#inFlight.delete(id);
      const ended = await endDispatch(table, id, f.attempt, clock.now(), `agent ${f.agentId} no longer holds account ${account}`);
      if (ended !== undefined) {
        log.info({ operationId: id, account, agentId: f.agentId }, 'operation goes out again: its agent no longer holds the account');
        await syncQueueEntry(table, ended);
      }
    }
    if (lost.length > 0) this.wake();
  }

  /** An agent's result: written unless the operation already finished (the first result wins). */
  async recordResult(agentId: string, result: OperationResult__Output): Promise<OperationResultOutcome> {
    const { table, clock, log, events } = this.#deps;
    const errorCode = resultErrorCode(result);
    pathTrace?.('replica.result_write_sent', result.operationId);
    const op = await finishOperation(
      table,
      result.operationId,
      {
        state: result.ok ? 'SUCCEEDED' : 'FAILED',
        account: result.account,
        agentId,
        message: result.message,
        ...(errorCode === undefined ? {} : { errorCode }),
        report: reportOf(agentId, result),
        outcomes: boundedOutcomes(result.outcomes.map(outcomeFromWire)),
      },
      clock.now(),
    );
    pathTrace?.('replica.result_write_answered', result.operationId);
    if (op === undefined) {
      const current = await getOperation(table, result.operationId);
      const stranger = current !== undefined && !(current.handedTo ?? []).includes(agentId) && current.dispatch?.agentId !== agentId;
      const why =
        current === undefined
          ? 'no such operation'
          : current.account !== result.account
            ? `it belongs to account ${current.account}`
            : stranger
              ? `it was never handed to agent ${agentId}`
              : `it already ended ${current.state}`;
      log[current === undefined || current.account !== result.account || stranger ? 'warn' : 'info']({ operationId: result.operationId, agentId, attempt: result.attempt }, `operation result ignored: ${why}`);
      return 'ignored';
    }
    if (errorCode === undefined && result.errorCode !== '') {
      // Only its length: the text is the peer's, and a log line is no place for it.
      log.warn({ operationId: op.id, agentId, ok: result.ok, errorCodeLength: result.errorCode.length }, 'operation result taken without its error code: not one this driver knows, or on a success');
    }
    events?.finished(op);
    recordOperationEnd(this.#deps.metrics, op, clock.now());
    // The entry is deleted below: a deferred update of it is not made.
    const deferred = this.#entrySyncs.get(op.id);
    this.#entrySyncs.delete(op.id);
    deferred?.abort();
    // The result is stored: the agent may be told so now; the log line and the queue entry's delete (a
    // pass drops the entry if this fails) come on a later turn of the event loop, so the answers to the
    // agent and to a waiting request go out first. Until the entry is gone the operation counts as in
    // hand, so a pass does not send it again.
    this.#keep(
      new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => {
          log.info({ operationId: op.id, account: op.account, agentId, attempt: result.attempt, state: op.state }, 'operation finished');
          return deleteFinishedQueueEntry(table, op);
        })
        .catch((err: unknown) => log.warn({ err, operationId: op.id }, 'queue entry not deleted'))
        .finally(() => this.#inFlight.delete(op.id)),
    );
    return 'recorded';
  }
}
