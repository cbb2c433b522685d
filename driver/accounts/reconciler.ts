/**
 * One replica's side of assignment. It brings each account item and the agents this replica serves
 * in line with each other (`settle`): it decides and conditionally writes the item (plan.ts), then
 * tells its own agents what changed for them (assignment-messages.ts). Accounts are settled:
 *
 * - when the work feed names them (read every `pollIntervalMs`: the pick-up bound);
 * - when one of this replica's agents says hello (the accounts of its zone, its static accounts and
 *   what it says it holds) or answers an assignment;
 * - all of them every `fullReconcileIntervalMs`, and as soon as a sweep of the session items (every
 *   `sweepIntervalMs`) finds an agent gone for longer than `handoverGraceMs`: that repairs a feed
 *   entry that was never written and moves the caching role off departed agents.
 *
 * Each sweep also spreads the caching roles (spread-pass.ts): roles move to this replica's agents
 * that cache fewer than their share of their zone's accounts, from agents above theirs.
 *
 * What this replica keeps in memory (a cache of account items, who is live) only saves reads:
 * every decision is a write conditional on the item's version, and every message is rebuilt from
 * the table and what the agent says it holds.
 */
import type { Clock } from '../../shared/clock.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { AssignmentResult__Output } from '../../shared/protocol/messages.ts';
import { protocolError } from '../../shared/protocol/problems.ts';
import { allAccounts, getAccount, getAccounts, mutateAccount, writeAccount } from '../../shared/table/accounts/records.ts';
import { confirmAnswer, confirmationOnly } from '../../shared/table/accounts/answer-write.ts';
import { followAccountFacets } from '../../shared/table/accounts/facets.ts';
import { agentsWhoseHoldingChanged, followHeldAccounts } from '../../shared/table/accounts/held.ts';
import { runBounded } from '../../shared/table/core/bounded.ts';
import { CHANGE_RETENTION_MS, appendChanges, pruneChanges, type Change } from '../../shared/table/accounts/feed.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { deleteAgentBinding } from '../../shared/table/agents/bindings.ts';
import { allSessions, deleteSession, staticAccountsOf } from '../../shared/table/agents/sessions.ts';
import { removeAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { Waker } from '../../shared/waker.ts';
import { LatchedWaker } from '../wake/latched-waker.ts';
import type { AgentSession, Holding } from '../agent-session.ts';
import type { Backoff } from '../../shared/backoff.ts';
import { STORE_BACKOFF_MAX_MS, isStoreOutage, storeBackoff } from '../backoff.ts';
import type { DriverGrpcConfig } from '../config.ts';
import { ReplicaAccounts } from './replica-accounts.ts';
import type { DriverMetrics } from '../metrics/metrics.ts';
import { FeedReader } from './feed-reader.ts';
import { GroupCommit } from './group-commit.ts';
import { Slots } from './slots.ts';
import { KeyedLock } from './keyed-lock.ts';
import { LocalSessions } from './local-sessions.ts';
import { messageFor } from './assignment-messages.ts';
import { planAccount, type Answer, type HandOff } from './plan.ts';
import { handOutLead } from './hand-out-lead.ts';
import { spreadMovesHere } from './spread-pass.ts';
import { PresenceTracker } from './presence.ts';
import { assignmentGeneration, placeAllows, type AgentPlace } from './wanted.ts';

export type AssignmentSettings = DriverGrpcConfig['assignment'];

export interface ReconcilerDeps {
  table: TableRef;
  clock: Clock;
  log: Logger;
  settings: AssignmentSettings;
  holdingChanged(session: AgentSession, account: string, holding: Holding | undefined): void;
  metrics?: DriverMetrics | undefined;
}

export type AssignmentResultOutcome = 'recorded' | 'duplicate' | 'stale';

const MAX_ATTEMPTS = 10;
/**
 * An account read behind its feed entry (the API appends the entry alongside the write) is read again
 * this soon, then twice as late, `BEHIND_RECHECKS` times: the write is on its way, and without wakes the
 * next poll would come a whole `pollIntervalMs` later.
 */
const BEHIND_RECHECK_MS = 25;
const BEHIND_RECHECKS = 2;
/** How many times a replica leaves an account's hand-out to the lead before writing it itself (hand-out-lead.ts). */
const MAX_DEFERRALS = 3;
/**
 * The feed entries a replica appends (news for the other replicas, who read the feed every
 * `pollIntervalMs`) wait this long to be joined into one BatchWriteItem; nothing here waits for them.
 */
const NEWS_LINGER_MS = 50;
/** Accounts read per BatchGetItem when settling many at once. */
const BATCH = 100;

export class AssignmentReconciler {
  readonly #deps: ReconcilerDeps;
  readonly #cache = new ReplicaAccounts();
  readonly #local = new LocalSessions();
  readonly #locks = new KeyedLock();
  readonly #pending = new Set<string>();
  readonly #pumpWaker = new Waker();
  readonly #sweepWaker = new Waker();
  /** Woken by a wake from the API: the feed is read at once, once for any number of wakes meanwhile. */
  readonly #feedWaker = new LatchedWaker();
  readonly #presence: PresenceTracker;
  readonly #feed: FeedReader;
  readonly #stop = new AbortController();
  readonly #loops: Promise<void>[] = [];
  /** Writes started outside the loops (after a removal is confirmed, the index follows of an answer), awaited on stop. */
  readonly #background = new Set<Promise<unknown>>();
  #fullRun: Promise<void> | undefined;
  /** Caching elections planned here and not yet written: counted as roles, so settles running at once spread their picks. */
  readonly #electing = new Map<string, number>();
  /** Accounts left to the replica that leads their hand-out, and how many times in a row (hand-out-lead.ts). */
  readonly #deferred = new Map<string, number>();
  #lastPrune = 0;
  /** Settles that failed because the table is not answering, in a row: their retries wait longer and longer. */
  readonly #outage: Backoff;
  /** The index follows and feed entries of settles running at once, written together (group-commit.ts). */
  readonly #facets: GroupCommit<AccountRecord>;
  readonly #held: GroupCommit<{ record: AccountRecord; agentIds: string[] }>;
  readonly #news: GroupCommit<Change>;
  /** Accounts whose feed entry named a later generation than their item, with the rechecks made (`#recheckBehind`). */
  readonly #behind = new Map<string, number>();
  /** Answers settled at once, over all of this replica's streams. */
  readonly #answerSlots: Slots;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#presence = new PresenceTracker(deps.settings.handoverGraceMs, deps.settings.clockSkewMs);
    this.#feed = new FeedReader(deps.table, deps.clock, deps.settings.clockSkewMs, (lagMs) => deps.metrics?.assignmentPickupLag.observe(lagMs / 1000));
    deps.metrics?.follow({ assignmentQueue: () => this.#pending.size });
    this.#outage = storeBackoff(deps.settings.pollIntervalMs * 4, Math.max(deps.settings.pollIntervalMs * 4, STORE_BACKOFF_MAX_MS));
    this.#answerSlots = new Slots(deps.settings.concurrency);
    this.#facets = new GroupCommit((records) => followAccountFacets(deps.table, newestOf(records)));
    this.#held = new GroupCommit((changes) => followHeldAccounts(deps.table, changes));
    // One BatchWriteItem may not name a key twice: an entry appended twice in one run is one entry.
    this.#news = new GroupCommit((changes) => appendChanges(deps.table, [...new Map(changes.map((c) => [`${c.at}#${c.name}#${c.generation}`, c])).values()]), 500, { clock: deps.clock, ms: NEWS_LINGER_MS });
  }

  /** Loads the accounts and who is live, then runs the loops until `stop()`. */
  async start(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.#stop.abort(), { once: true });
    const readAt = this.#deps.clock.now();
    this.#presence.refresh(await allSessions(this.#deps.table), this.#deps.clock.now(), readAt);
    await this.fullReconcile();
    const s = this.#deps.settings;
    this.#loops.push(
      this.#every(s.pollIntervalMs, this.#feedWaker, () => this.#readFeed()),
      this.#every(s.sweepIntervalMs, this.#sweepWaker, () => this.#sweep()),
      this.#every(s.fullReconcileIntervalMs, undefined, () => this.fullReconcile()),
      this.#pump(),
    );
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#loops.splice(0));
    await Promise.all(this.#background);
  }

  async #readFeed(): Promise<void> {
    const names = await this.#feed.poll();
    // A record per hop of an activation at debug level (bench:assign's breakdown: docs/benchmarks.md).
    if (names.length > 0) this.#deps.log.debug({ accounts: names.slice(0, 20), count: names.length }, 'work feed read');
    this.schedule(names);
  }

  /** Reads the work feed now instead of at the next poll (the API wrote to it: docs/protocol.md#6b-wakes). */
  wakeFeed(): void {
    this.#feedWaker.wake();
  }

  /**
   * Settles the account a wake named now, from its item read fresh, instead of reading the work feed
   * first (docs/protocol.md#6b-wakes). The name is only where to look: the item decides, as it does
   * for an account the feed names.
   */
  settleNamed(name: string): void {
    // A record per hop of an activation at debug level (bench:assign's breakdown: docs/benchmarks.md).
    this.#deps.log.debug({ accounts: [name] }, 'account named by a wake');
    this.schedule([name]);
  }

  /** Settles these accounts soon, reading them fresh, a batch at a time. */
  schedule(names: Iterable<string>): void {
    let added = false;
    for (const n of names) {
      if (!this.#pending.has(n)) added = true;
      this.#pending.add(n);
    }
    if (added) this.#pumpWaker.wake();
  }

  sessionOpened(session: AgentSession): void {
    this.#local.opened(session);
    this.#presence.opened(session.agentId, placeOf(session));
    this.schedule([...session.holdings.keys(), ...(session.hello?.staticAccounts ?? []).map((a) => a.name), ...this.#cache.activatedFor(session.zone)]);
  }

  sessionClosed(session: AgentSession): void {
    if (!this.#local.closed(session)) return;
    this.#presence.closed(session.agentId);
    // Look again once the grace is over: if the agent has not come back, its accounts move.
    this.#after(this.#deps.settings.handoverGraceMs + 50, () => this.#sweepWaker.wake());
  }

  /** An agent's answer to an assignment: recorded, or refused when the agent was never given it. */
  handleResult(result: AssignmentResult__Output, session: AgentSession): Promise<AssignmentResultOutcome> {
    this.#deps.log.debug({ account: result.account, agentId: session.agentId, generation: result.generation }, 'assignment result received');
    const answer: Answer = { agentId: session.agentId, ok: result.ok, message: result.message, generation: result.generation };
    return this.#answerSlots.run(() => this.#settle(result.account, { answer, from: session }));
  }

  /** The stream that answered now holds (or refused) what it was sent. */
  #answered(session: AgentSession, name: string, answer: Answer): void {
    const holding = session.holdings.get(name);
    if (holding === undefined || holding.generation !== answer.generation || holding.state !== 'sent') return;
    const next: Holding = { ...holding, state: answer.ok ? 'held' : 'failed' };
    this.#local.hold(session, name, next);
    this.#deps.holdingChanged(session, name, next);
  }

  /** Compares every account with what this replica's agents hold, writing and sending what differs. */
  fullReconcile(): Promise<void> {
    this.#fullRun ??= this.#fullReconcile().finally(() => {
      this.#fullRun = undefined;
    });
    return this.#fullRun;
  }

  async #fullReconcile(): Promise<void> {
    const seen = new Set<string>();
    for await (const page of allAccounts(this.#deps.table, 500, { consistent: true })) {
      for (const r of page) seen.add(r.name);
      await this.#settleAll(page.map((r) => [r.name, r] as const));
    }
    const held = this.#local.heldAccounts();
    // Not in the scan: gone, or created after the scan passed its name; read again to tell which.
    const vanished = [...new Set([...this.#cache.names(), ...held])].filter((n) => !seen.has(n));
    for (let i = 0; i < vanished.length; i += 100) {
      const names = vanished.slice(i, i + 100);
      const found = await getAccounts(this.#deps.table, names, { consistent: true });
      await this.#settleAll(names.map((n) => [n, found.get(n) ?? null] as const));
    }
    const now = this.#deps.clock.now();
    if (now - this.#lastPrune > 3_600_000) {
      this.#lastPrune = now;
      await pruneChanges(this.#deps.table, now - CHANGE_RETENTION_MS);
    }
  }

  async #settleAll(items: readonly (readonly [string, AccountRecord | null])[]): Promise<void> {
    await runBounded(
      items.map(([name, fresh]) => () => this.#settle(name, { fresh }).then(() => undefined, (e: unknown) => this.#failed(name, e))),
      this.#deps.settings.concurrency,
    );
  }

  #failed(name: string, e: unknown): void {
    const { log, settings } = this.#deps;
    let delay = settings.pollIntervalMs * 4;
    if (isStoreOutage(e)) {
      // One line per outage, not one per account and retry.
      if (this.#outage.failures === 0) log.warn({ account: name, err: e instanceof Error ? e.message : e }, 'the table is not answering: accounts wait to be settled');
      delay = this.#outage.failed();
    } else {
      log.error({ account: name, err: isVendorError(e) ? e.message : e }, 'settling the account failed; trying again later');
    }
    this.#after(delay, () => this.schedule([name]));
  }

  #settled(): void {
    if (this.#outage.failures > 0) this.#deps.log.info({ failures: this.#outage.failures }, 'the table answers again: accounts are settled');
    this.#outage.succeeded();
  }

  /**
   * Settles scheduled accounts: reads them a batch at a time and keeps `concurrency` settles going,
   * reading the next batch while the last ones still run.
   */
  async #pump(): Promise<void> {
    const signal = this.#stop.signal;
    const limit = this.#deps.settings.concurrency;
    const ready: (readonly [string, AccountRecord | null])[] = [];
    let running = 0;
    const inFlight = new Set<Promise<void>>();
    while (!signal.aborted) {
      while (ready.length > 0 && running < limit) {
        const [name, fresh] = ready.shift() as readonly [string, AccountRecord | null];
        running++;
        const task = this.#settle(name, { fresh, mayDefer: true })
          .then(() => undefined, (e: unknown) => this.#failed(name, e))
          .finally(() => {
            running--;
            inFlight.delete(task);
            this.#pumpWaker.wake();
          });
        inFlight.add(task);
      }
      if (ready.length < limit && this.#pending.size > 0) {
        const names = [...this.#pending].slice(0, BATCH);
        for (const n of names) this.#pending.delete(n);
        try {
          const found = await getAccounts(this.#deps.table, names, { consistent: true });
          this.#settled();
          for (const n of names) ready.push([n, found.get(n) ?? null]);
        } catch (e) {
          for (const n of names) this.#failed(n, e);
        }
        continue;
      }
      await this.#pumpWaker.wait(this.#deps.clock, Infinity, signal);
    }
    await Promise.all(inFlight);
  }

  /**
   * Runs `work` every `ms` (or when `waker` is woken) until stopped. A failed run is logged and the
   * loop goes on; while runs keep failing, the waits grow (to `STORE_BACKOFF_MAX_MS`), so a table
   * that is gone is not asked at the loop's normal pace.
   */
  async #every(ms: number, waker: Pick<Waker, 'wait'> | undefined, work: () => Promise<void>): Promise<void> {
    const { clock, log } = this.#deps;
    const signal = this.#stop.signal;
    const wake = waker ?? new Waker();
    const backoff = storeBackoff(ms, Math.max(ms, STORE_BACKOFF_MAX_MS));
    let wait = ms;
    while (!signal.aborted) {
      await wake.wait(clock, wait, signal);
      if (signal.aborted) return;
      try {
        await work();
        if (backoff.failures > 0) log.info({ failures: backoff.failures }, 'assignment loop runs again');
        backoff.succeeded();
        wait = ms;
      } catch (e) {
        if (signal.aborted) return;
        if (backoff.failures === 0) log[isStoreOutage(e) ? 'warn' : 'error']({ err: isVendorError(e) ? e.message : e }, 'assignment loop failed; it runs again, waiting longer while it keeps failing');
        wait = Math.max(ms, backoff.failed());
      }
    }
  }

  /** Finds agents gone past the grace; their accounts move and their static accounts and session items go. */
  async #sweep(): Promise<void> {
    const { table, clock, log } = this.#deps;
    const readAt = clock.now();
    const over = this.#presence.refresh(await allSessions(table), clock.now(), readAt);
    if (over.length === 0) return this.#spread();
    log.info({ agents: over.map((s) => s.agentId) }, 'agents gone past the hand-over grace: moving their accounts');
    await this.fullReconcile();
    const now = clock.now();
    for (const s of over) {
      // Only this session's announcement goes: a newer session of the agent may have announced since.
      if (staticAccountsOf(s) > 0) await removeAgentStaticAccounts(table, s.agentId, now, s.sessionId);
      await deleteSession(table, s, now);
      // The agent id is free for another identity from now on (driver/session-store.ts).
      if (s.sessionId !== undefined) await deleteAgentBinding(table, s.agentId, s.sessionId);
    }
  }

  /** Moves caching roles to this replica's agents below their share; waits while settles are queued. */
  async #spread(): Promise<void> {
    if (this.#pending.size > 0) return;
    for (const { zone, moves } of spreadMovesHere(this.#cache, this.#presence, (id) => this.#local.has(id))) {
      this.#deps.log.info({ zone, moves: moves.length }, 'spreading caching roles');
      await runBounded(
        moves.map((m) => () => this.#settle(m.account, { handOff: m }).then(() => undefined, (e: unknown) => this.#failed(m.account, e))),
        this.#deps.settings.concurrency,
      );
    }
  }

  /**
   * Brings one account in line, under its lock: the item (fresh when given, `null` when known to be
   * gone, else from the cache) is planned and written until a write holds, then this replica's
   * agents are told what changed. With an answer, the answer is checked and applied first.
   */
  #settle(name: string, input: { fresh?: AccountRecord | null; answer?: Answer; from?: AgentSession; handOff?: HandOff; mayDefer?: boolean }): Promise<AssignmentResultOutcome> {
    return this.#locks.run(name, async () => {
      const { table, clock } = this.#deps;
      const { answer } = input;
      let record = await this.#current(name, input.fresh);
      // A feed entry read before its write landed: the next poll reads it again (feed-reader.ts), and
      // the account is read again sooner than that, since the write is on its way.
      if (record !== undefined && input.fresh !== undefined) {
        if (this.#feed.behind(name, assignmentGeneration(record))) this.#recheckBehind(name);
        else this.#behind.delete(name);
      }
      let outcome: AssignmentResultOutcome = 'recorded';
      let cachingMoved = false;
      let stateChanged = false;
      let agentsChanged: string[] = [];
      let handedToOthers = false;
      let previousCaching: string | undefined;
      let fresh = input.fresh !== undefined;
      for (let attempt = 0; ; attempt++) {
        if (attempt >= MAX_ATTEMPTS) throw new VendorError('precondition_failed', `account ${name} keeps changing under this replica`);
        if (answer !== undefined) {
          const verdict = judge(record, answer);
          if (verdict === 'unknown' && !fresh) {
            record = await getAccount(table, name, { consistent: true });
            fresh = true;
            continue;
          }
          if (verdict === 'unknown') throw unknownAccount(name, record, answer);
          if (verdict === 'current' && input.from !== undefined && record !== undefined && !placeAllows(record, answer.agentId, placeOf(input.from))) {
            // The agent id's entry, answered from a stream whose zone or identity may not hold the
            // account (the id passed to another identity after the grace, before a sweep dropped the
            // entry): it changes nothing. The next settle of the account marks the entry removing.
            this.#deps.log.warn({ account: name, agentId: answer.agentId, identity: input.from.identity.name, zone: input.from.zone }, 'assignment result ignored: the stream may not hold the account');
            outcome = 'stale';
            break;
          }
          if (verdict !== 'current') {
            outcome = verdict;
            break;
          }
        }
        if (record === undefined) break;
        const local = new Map(this.#local.concerned(name, record).map((s) => [s.agentId, placeOf(s)] as const));
        const lead = answer === undefined && input.handOff === undefined ? handOutLead(record, local, this.#presence) : undefined;
        if (lead !== undefined && !lead.leads && attempt === 0 && input.mayDefer === true && this.#defer(name, lead.ownWaiting)) {
          this.#cache.set(record);
          return outcome;
        }
        this.#deferred.delete(name);
        for (const [agentId, place] of lead?.leads === true ? lead.others : []) local.set(agentId, place);
        const changes = planAccount({
          record,
          now: clock.now(),
          local,
          presence: this.#presence,
          roles: (id) => this.#cache.rolesOf(id) + (this.#electing.get(id) ?? 0),
          ...(answer === undefined ? {} : { answer }),
          ...(input.handOff === undefined ? {} : { handOff: input.handOff }),
        });
        if (changes === undefined) break;
        const elected = changes.cachingAgentId ?? undefined;
        if (elected !== undefined) this.#electing.set(elected, (this.#electing.get(elected) ?? 0) + 1);
        try {
          previousCaching = record.cachingAgentId;
          const before: AccountRecord = record;
          // A confirmation alone is conditional on what it was decided from (answer-write.ts), so the
          // other agents' answers written meanwhile by other replicas do not refuse it.
          const confirmed = answer === undefined ? undefined : confirmationOnly(changes, answer.agentId);
          record = confirmed === undefined ? await writeAccount(table, record, changes, clock.now()) : await confirmAnswer(table, record, confirmed, clock.now());
          this.#deps.log.debug({ account: name, version: record.version, answer: answer !== undefined }, 'account item written');
          cachingMoved = changes.cachingAgentId !== undefined;
          stateChanged = changes.state !== undefined;
          // Only entries whose holding the write changed follow: a hand-out's does not, so it goes to the agent at once.
          agentsChanged = agentsWhoseHoldingChanged(before, record, [...(changes.setAgents ?? []).map((a) => a.agentId), ...(changes.removeAgents ?? [])]);
          handedToOthers = lead?.leads === true && (changes.setAgents ?? []).some((a) => lead.others.has(a.agentId));
          break;
        } catch (e) {
          if (!isVendorError(e) || e.code !== 'precondition_failed') throw e;
          record = await getAccount(table, name, { consistent: true });
          fresh = true;
        } finally {
          if (elected !== undefined) {
            // The written item is counted by the cache from here on (set below, before the next plan).
            if (record !== undefined) this.#cache.set(record);
            const n = (this.#electing.get(elected) ?? 1) - 1;
            if (n === 0) this.#electing.delete(elected);
            else this.#electing.set(elected, n);
          }
        }
      }
      if (record === undefined) {
        this.#cache.delete(name);
        this.#deferred.delete(name);
      } else this.#cache.set(record);
      // The list filters and the summary count states from the facet index (docs/table.md#the-facet-index),
      // and the agents API reads what each agent holds from the held index.
      if (record !== undefined) {
        const written = record;
        const follows = Promise.all([
          stateChanged ? this.#facets.add([written]) : undefined,
          agentsChanged.length > 0 ? this.#held.add([{ record: written, agentIds: agentsChanged }]) : undefined,
        ]);
        // An answer is recorded once its write holds (the account item is what GET serves); the
        // indexes follow it off that path, so the next answer of the account does not wait for them.
        if (answer === undefined) await follows;
        else this.#followInBackground(name, follows);
      }
      if (record !== undefined) this.#recheckSpared(name, record);
      let news = handedToOthers;
      if (cachingMoved && record !== undefined) {
        // A first election is part of every first assignment (1,000 lines for a PATCH of 1,000); a move is news.
        const level = previousCaching === undefined ? 'debug' : 'info';
        this.#deps.log[level]({ account: name, cachingAgentId: record.cachingAgentId ?? null, cachingEpoch: record.cachingEpoch ?? 0 }, 'caching role moved');
        // Agents of other replicas that gain or lose the role learn of it through the feed, and so do
        // the other replicas' caches, which count the roles for the spread: every move is news.
        const here = (agentId: string | undefined) => agentId === undefined || this.#local.has(agentId);
        if (previousCaching !== undefined || !here(record.cachingAgentId)) news = true;
      }
      // A hand-out written for agents of other replicas is news to them too (one entry, group-committed
      // with the others): their replicas send it on their next read of the feed, not at their look again.
      if (news && record !== undefined) {
        const entry: Change = { name, action: 'assign', generation: assignmentGeneration(record), at: clock.now() };
        this.#feed.wrote(entry);
        // Off the path: the other replicas read it at their next feed read (or look again), and this
        // replica's agents are told now.
        this.#followInBackground(name, this.#news.add([entry]), 'a feed entry for the other replicas was not appended; they look again');
      }
      if (answer !== undefined && input.from !== undefined && outcome !== 'stale') this.#answered(input.from, name, answer);
      this.#tellAgents(name, record);
      return outcome;
    });
  }

  /**
   * Leaves the account to the replica that leads its hand-out (hand-out-lead.ts); false once it has
   * been left to it `MAX_DEFERRALS` times in a row, when this replica writes it itself. A replica
   * none of whose agents waits does not look again: the replicas whose agents wait do.
   */
  #defer(name: string, ownWaiting: boolean): boolean {
    const times = this.#deferred.get(name) ?? 0;
    if (times >= MAX_DEFERRALS) return false;
    if (!ownWaiting) return true;
    this.#deferred.set(name, times + 1);
    this.#after(this.#deps.settings.pollIntervalMs * 4 * 2 ** times, () => {
      // Settled meanwhile (the lead's feed entry came first): no look is due.
      if (this.#deferred.get(name) !== times + 1) return;
      this.#deps.log.debug({ account: name, times: times + 1 }, 'looking again at an account left to the hand-out lead');
      this.schedule([name]);
    });
    return true;
  }

  /**
   * Entries of agents this replica sees neither live nor within the grace, kept only because they were
   * written after its last read of the session items (plan.ts): the account is settled again once a
   * later read can judge them, so an agent that really is gone does not keep its entry until the next
   * full reconcile.
   */
  #recheckSpared(name: string, record: AccountRecord): void {
    const { clock, settings } = this.#deps;
    const presence = this.#presence;
    let newest: number | undefined;
    for (const [agentId, e] of Object.entries(record.agents)) {
      if (this.#local.has(agentId) || presence.live.has(agentId) || presence.inGrace.has(agentId) || e.at < presence.readSince) continue;
      newest = Math.max(newest ?? e.at, e.at);
    }
    if (newest === undefined) return;
    // The first read started after `newest` plus the skew comes with the sweep after that moment.
    const delay = Math.max(0, newest + settings.clockSkewMs - clock.now()) + settings.sweepIntervalMs * 2;
    this.#after(delay, () => this.schedule([name]));
  }

  /**
   * The item to settle from. A read made before waiting for the lock may be older than what a settle
   * that ran meanwhile wrote (and cached): the newer one counts, so an agent is never sent an older
   * generation than it was already given.
   */
  async #current(name: string, fresh: AccountRecord | null | undefined): Promise<AccountRecord | undefined> {
    const cached = this.#cache.get(name);
    if (fresh === undefined) return cached ?? (await getAccount(this.#deps.table, name, { consistent: true }));
    if (fresh === null) return cached === undefined ? undefined : await getAccount(this.#deps.table, name, { consistent: true });
    const newer = cached !== undefined && cached.version > fresh.version && cached.updatedAt >= fresh.updatedAt;
    return newer ? cached : fresh;
  }

  #tellAgents(name: string, record: AccountRecord | undefined): void {
    for (const session of this.#local.concerned(name, record)) {
      const held = session.holdings.get(name);
      const message = messageFor(name, record, session.agentId, placeOf(session), held);
      if (message === undefined) {
        if (held?.state === 'announced' && confirms(record, session.agentId, held)) {
          const next: Holding = { ...held, state: 'held' };
          this.#local.hold(session, name, next);
          this.#deps.holdingChanged(session, name, next);
        }
        continue;
      }
      const body = message.body;
      const holding: Holding =
        message.kind === 'assignAccount'
          ? { generation: Number(body.generation), caching: message.body.caching ?? false, cachingEpoch: Number(message.body.cachingEpoch ?? 0), state: 'sent' }
          : { generation: Number(body.generation), caching: false, cachingEpoch: 0, state: 'removing' };
      this.#local.hold(session, name, holding);
      this.#deps.holdingChanged(session, name, holding);
      const acked = session.send(message);
      this.#deps.log.debug({ account: name, agentId: session.agentId, kind: message.kind, generation: holding.generation }, 'assignment sent');
      if (message.kind === 'removeAccount') {
        acked.then(
          () => this.#removed(name, session, holding),
          () => undefined,
        );
      } else {
        acked.catch(() => undefined); // the stream ended; its next stream is settled afresh
      }
    }
  }

  /**
   * Runs `then` after `ms` on the injected clock: the looks again that an account or the sweep is due
   * (a failed settle, an entry spared, a hand-out left to the lead, an entry ahead of its write, an
   * agent's grace). Stopping the reconciler drops them.
   */
  #after(ms: number, then: () => void): void {
    this.#deps.clock.sleep(ms, this.#stop.signal).then(then, () => undefined);
  }

  /** Reads an account whose feed entry came before its write again, after 25 then 50 ms; the next poll reads the entry again after that. */
  #recheckBehind(name: string): void {
    const made = this.#behind.get(name) ?? 0;
    if (made >= BEHIND_RECHECKS) {
      this.#behind.delete(name);
      return;
    }
    this.#behind.set(name, made + 1);
    this.#after(BEHIND_RECHECK_MS * 2 ** made, () => this.schedule([name]));
  }

  /** Index follows left to run on their own: awaited on stop; a failure is logged (the next change of who holds the account, or a rebuild, repairs it). */
  #followInBackground(name: string, follows: Promise<unknown>, failure = 'an index did not follow the account item'): void {
    const work = follows.then(
      () => undefined,
      (e: unknown) => this.#deps.log.warn({ account: name, err: isVendorError(e) ? e.message : e }, failure),
    );
    this.#background.add(work);
    void work.finally(() => this.#background.delete(work));
  }

  /** The agent confirmed a removal: its entry goes. */
  #removed(name: string, session: AgentSession, holding: Holding): void {
    if (session.holdings.get(name) === holding) {
      this.#local.hold(session, name, undefined);
      this.#deps.holdingChanged(session, name, undefined);
    }
    if (this.#stop.signal.aborted) return;
    const work = this.#locks
      .run(name, async () => {
        const done = await mutateAccount(
          this.#deps.table,
          name,
          (r) => {
            const e = r?.agents[session.agentId];
            return e?.removing === true && e.assigned === holding.generation ? { removeAgents: [session.agentId] } : undefined;
          },
          () => this.#deps.clock.now(),
        );
        if (done.changed && done.record !== undefined) await this.#held.add([{ record: done.record, agentIds: [session.agentId] }]);
        return done;
      })
      .then(
        ({ record }) => {
          if (record === undefined) this.#cache.delete(name);
          else this.#cache.set(record);
        },
        (e: unknown) => this.#deps.log.warn({ account: name, agentId: session.agentId, err: isVendorError(e) ? e.message : e }, 'could not drop a removed agent entry'),
      );
    this.#background.add(work);
    void work.finally(() => this.#background.delete(work));
  }
}

/** One record per account, the newest written (several settles of one account may share a run). */
function newestOf(records: readonly AccountRecord[]): AccountRecord[] {
  const newest = new Map<string, AccountRecord>();
  for (const r of records) if ((newest.get(r.name)?.version ?? -1) < r.version) newest.set(r.name, r);
  return [...newest.values()];
}

/** Where one of this replica's agents is: its zone, and what its identity allows. */
function placeOf(session: AgentSession): AgentPlace {
  return { zone: session.zone, unzoned: session.identity.unzoned };
}

/** The item records the agent's confirmation of the generation it says it holds. */
function confirms(record: AccountRecord | undefined, agentId: string, holding: Holding): boolean {
  const e = record?.agents[agentId];
  return e !== undefined && e.ok && e.removing !== true && e.generation === holding.generation;
}

type Verdict = 'current' | 'duplicate' | 'stale' | 'unknown';

/** Whether an answer is for what the agent was last given, an older hand-out, a repeat, or something never given. */
function judge(record: AccountRecord | undefined, answer: Answer): Verdict {
  const e = record?.agents[answer.agentId];
  // An answer for an older generation than the account's, whose entry has gone since (a removal the
  // agent confirmed before its answer came back on a new stream), changes nothing either way.
  if (e === undefined && record !== undefined && answer.generation < assignmentGeneration(record)) return 'stale';
  if (e === undefined || answer.generation > (e.assigned ?? 0)) return 'unknown';
  if (answer.generation < (e.assigned ?? 0) || e.removing === true) return 'stale';
  if (e.generation === answer.generation && e.ok === answer.ok && (e.message ?? '') === answer.message) return 'duplicate';
  return 'current';
}

function unknownAccount(name: string, record: AccountRecord | undefined, answer: Answer): VendorError {
  const e = record?.agents[answer.agentId];
  const message =
    e === undefined
      ? `assignment result for account ${name}, which was not assigned to this agent`
      : `assignment result for generation ${answer.generation} of account ${name}, which was never assigned (latest: ${e.assigned ?? 0})`;
  return protocolError('unknown_account', message, { details: { account: name } });
}
