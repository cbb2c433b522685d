/**
 * Where the driver keeps an agent's session: one item per agent instance in the table, so that any
 * replica can tell which agents are live, and an agent that reconnects through another replica
 * resumes where its last stream left off. Nothing here lives in one replica's memory.
 */
import type { AccountSettings } from '../shared/accounts/settings.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import { isDriverDefined } from '../shared/accounts/precedence.ts';
import type { Logger } from '../shared/log.ts';
import { getAccounts } from '../shared/table/accounts/records.ts';
import { getAgentBinding, putAgentBinding, type BindingPrecondition } from '../shared/table/agents/bindings.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { endSession, getSession, goneSince, putSession, renewSession } from '../shared/table/agents/sessions.ts';
import { putAgentStaticAccounts } from '../shared/table/sources/agent-static.ts';
import { helloRefused } from './hello-policy.ts';
import { CONCURRENT_OPENINGS, OpeningLine, retryOpeningStep } from './session-openings.ts';

export interface SessionRecord {
  sessionId: string;
  agentId: string;
  zone: string;
  agentVersion: string;
  /** The name of the identity the stream's credential speaks for. */
  identity: string;
  /** Whether that identity may be sent accounts pinned to no zone. */
  unzoned: boolean;
  replicaId: string;
  /** Address of the agent as the driver sees it. */
  peer: string;
  /** Where this replica takes wakes (docs/protocol.md#6b-wakes), when it does. */
  wake?: string | undefined;
  openedAt: number;
  /** Judged by the driver's own receive times, so the agent's clock does not matter. */
  leaseExpiresAt: number;
  /** The agent's static accounts, already checked and in the table's shape. */
  staticAccounts: AccountSettings[];
}

/** What the driver knows of an agent's previous session, for Welcome.resume. */
export interface ResumeState {
  known: boolean;
  lastProcessedSeq: number;
}

export interface SessionStore {
  /**
   * Records a session once its agent has said hello (replacing the agent's previous one) and the
   * static accounts it announced; tells how far the driver processed `previousSessionId`. Refuses
   * (`forbidden`, writing nothing) when the agent id is bound to another identity. Nothing is written
   * when `signal` (the stream's end) aborts before the hello's turn comes.
   */
  open(record: SessionRecord, previousSessionId: string, signal?: AbortSignal): Promise<ResumeState>;
  /** Which of `names` are accounts the driver's own sources define. */
  driverDefined(names: readonly string[]): Promise<string[]>;
  /** Extends the lease (`now`: when, kept as the agent's last heartbeat); false when a newer stream of the same agent has taken the session over. */
  renew(record: SessionRecord, leaseExpiresAt: number, lastProcessedSeq: number, now?: number): Promise<boolean>;
  /** Marks the session ended; the agent keeps its accounts for the hand-over grace (docs/protocol.md). */
  close(record: SessionRecord, reason: string, now: number, lastProcessedSeq: number): Promise<void>;
}

export class TableSessionStore implements SessionStore {
  readonly #table: TableRef;
  readonly #log: Logger;
  readonly #graceMs: number;
  readonly #clock: Clock;
  /** Hellos are recorded a bounded number at a time (driver/session-openings.ts). */
  readonly #openings: OpeningLine;

  /** `graceMs`: the hand-over grace, for which an ended session still holds its agent id. */
  constructor(table: TableRef, log: Logger, graceMs: number, options: { clock?: Clock; concurrentOpenings?: number } = {}) {
    this.#table = table;
    this.#log = log;
    this.#graceMs = graceMs;
    this.#clock = options.clock ?? systemClock;
    this.#openings = new OpeningLine(options.concurrentOpenings ?? CONCURRENT_OPENINGS);
  }

  open(record: SessionRecord, previousSessionId: string, signal?: AbortSignal): Promise<ResumeState> {
    const queuedAt = this.#clock.now();
    // Only a hello that waited in line counts the wait: one run at once is recorded as it arrived,
    // whatever millisecond the clock turned to meanwhile.
    return this.#openings.run((waited) => this.#open(record, previousSessionId, waited ? this.#clock.now() - queuedAt : 0), signal);
  }

  /** Each step is idempotent on its own, so a step the table did not answer is tried again alone. */
  async #open(arrived: SessionRecord, previousSessionId: string, waitedMs: number): Promise<ResumeState> {
    // A hello that waited for its turn is recorded with its lease counted from its turn, not from its arrival.
    const record = waitedMs <= 0 ? arrived : { ...arrived, leaseExpiresAt: arrived.leaseExpiresAt + waitedMs };
    const step = <T>(run: () => Promise<T>) => retryOpeningStep(this.#clock, run);
    await step(() => this.#bind(record));
    // Read once, before this session's own item replaces it.
    const previous = previousSessionId === '' ? undefined : await step(() => getSession(this.#table, record.zone, record.agentId));
    const resume: ResumeState =
      previous !== undefined && previous.sessionId === previousSessionId
        ? { known: true, lastProcessedSeq: previous.lastProcessedSeq ?? 0 }
        : { known: false, lastProcessedSeq: 0 };
    await step(() => putSession(this.#table, {
      agentId: record.agentId,
      zoneId: record.zone,
      replicaId: record.replicaId,
      sessionId: record.sessionId,
      peer: record.peer,
      ...(record.wake === undefined ? {} : { wake: record.wake }),
      connectedAt: record.openedAt,
      leaseExpiresAt: record.leaseExpiresAt,
      agentVersion: record.agentVersion,
      identity: record.identity,
      unzoned: record.unzoned,
      staticAccountCount: record.staticAccounts.length,
      // Replicas of earlier versions read only whether this list is empty: one name tells them.
      staticAccounts: record.staticAccounts.slice(0, 1).map((a) => a.name),
      lastProcessedSeq: 0,
    }));
    const synced = await step(() => putAgentStaticAccounts(this.#table, record.agentId, record.zone, record.staticAccounts, record.openedAt, record.sessionId));
    if (synced.upserted.length + synced.removed.length > 0) {
      this.#log.info({ agentId: record.agentId, changed: synced.upserted, removed: synced.removed }, 'static accounts of the agent recorded');
    }
    return resume;
  }

  /**
   * Binds the agent id to the session's identity. An agent id belongs to the identity of its latest
   * session until that session has ended (or its lease expired) and the hand-over grace has passed
   * since: within the grace the agent may come back and keep its accounts, so no other identity may
   * take its id meanwhile. Conditional on the binding read, so two replicas never bind one id to two
   * identities at once.
   */
  async #bind(record: SessionRecord): Promise<void> {
    const binding = { agentId: record.agentId, identity: record.identity, zoneId: record.zone, sessionId: record.sessionId, at: record.openedAt, leaseExpiresAt: record.leaseExpiresAt };
    // The usual case (an id unbound, or bound to this identity) in one conditional write, without a read first.
    if (await putAgentBinding(this.#table, binding, { kind: 'same-identity' })) return;
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await getAgentBinding(this.#table, record.agentId);
      let when: BindingPrecondition;
      if (current === undefined) when = { kind: 'none' };
      else if (current.identity === record.identity) when = { kind: 'same-identity' };
      else {
        const session = await getSession(this.#table, current.zoneId, record.agentId);
        // Without its session's item (not written yet, or never: the replica failed in between), the
        // binding stands for that session, with the lease it was opened with.
        const since =
          session !== undefined && session.sessionId === current.sessionId
            ? goneSince(session, record.openedAt)
            : current.leaseExpiresAt > record.openedAt
              ? undefined
              : current.leaseExpiresAt;
        if (since === undefined || since > record.openedAt - this.#graceMs) {
          throw helloRefused(`agent id ${JSON.stringify(record.agentId)} belongs to another identity until its session has ended and the hand-over grace has passed`, 'bound', current.identity);
        }
        when = { kind: 'replaces', sessionId: current.sessionId };
      }
      if (await putAgentBinding(this.#table, binding, when)) {
        if (current !== undefined && current.identity !== record.identity) {
          this.#log.info({ agentId: record.agentId, identity: record.identity, previousIdentity: current.identity }, 'agent id bound to another identity: its previous session is over');
        }
        return;
      }
    }
    throw helloRefused(`agent id ${JSON.stringify(record.agentId)} is being bound by another session; try again`, 'bound');
  }

  async driverDefined(names: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < names.length; i += 100) {
      const found = await getAccounts(this.#table, names.slice(i, i + 100), { consistent: true });
      for (const [name, record] of found) if (isDriverDefined(record.defs)) out.push(name);
    }
    return out;
  }

  renew(record: SessionRecord, leaseExpiresAt: number, lastProcessedSeq: number, now?: number): Promise<boolean> {
    return renewSession(this.#table, record.zone, record.agentId, record.sessionId, leaseExpiresAt, lastProcessedSeq, now);
  }

  async close(record: SessionRecord, reason: string, now: number, lastProcessedSeq: number): Promise<void> {
    await endSession(this.#table, record.zone, record.agentId, record.sessionId, now, reason, lastProcessedSeq);
  }
}
