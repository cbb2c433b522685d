/**
 * Where the driver keeps an agent's session: one item per agent instance in the table, so that any
 * replica can tell which agents are live, and an agent that reconnects through another replica
 * resumes where its last stream left off. Nothing here lives in one replica's memory.
 */
import type { AccountSettings } from '../shared/accounts/schema.ts';
import type { Logger } from '../shared/log.ts';
import type { TableRef } from '../shared/table/client.ts';
import { endSession, getSession, putSession, renewSession } from '../shared/table/sessions.ts';
import { putAgentStaticAccounts } from '../shared/table/sources.ts';

export interface SessionRecord {
  sessionId: string;
  agentId: string;
  zone: string;
  agentVersion: string;
  replicaId: string;
  /** Address of the agent as the driver sees it. */
  peer: string;
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
   * static accounts it announced; tells how far the driver processed `previousSessionId`.
   */
  open(record: SessionRecord, previousSessionId: string): Promise<ResumeState>;
  /** Extends the lease; false when a newer stream of the same agent has taken the session over. */
  renew(record: SessionRecord, leaseExpiresAt: number, lastProcessedSeq: number): Promise<boolean>;
  /** Marks the session ended; the agent keeps its accounts for the hand-over grace (docs/protocol.md). */
  close(record: SessionRecord, reason: string, now: number, lastProcessedSeq: number): Promise<void>;
}

export class TableSessionStore implements SessionStore {
  readonly #table: TableRef;
  readonly #log: Logger;

  constructor(table: TableRef, log: Logger) {
    this.#table = table;
    this.#log = log;
  }

  async open(record: SessionRecord, previousSessionId: string): Promise<ResumeState> {
    const previous = previousSessionId === '' ? undefined : await getSession(this.#table, record.zone, record.agentId);
    const resume: ResumeState =
      previous !== undefined && previous.sessionId === previousSessionId
        ? { known: true, lastProcessedSeq: previous.lastProcessedSeq ?? 0 }
        : { known: false, lastProcessedSeq: 0 };
    await putSession(this.#table, {
      agentId: record.agentId,
      zoneId: record.zone,
      replicaId: record.replicaId,
      sessionId: record.sessionId,
      peer: record.peer,
      connectedAt: record.openedAt,
      leaseExpiresAt: record.leaseExpiresAt,
      agentVersion: record.agentVersion,
      staticAccounts: record.staticAccounts.map((a) => a.name),
      lastProcessedSeq: 0,
    });
    const synced = await putAgentStaticAccounts(this.#table, record.agentId, record.zone, record.staticAccounts, record.openedAt, record.sessionId);
    if (synced.upserted.length + synced.removed.length > 0) {
      this.#log.info({ agentId: record.agentId, changed: synced.upserted, removed: synced.removed }, 'static accounts of the agent recorded');
    }
    return resume;
  }

  renew(record: SessionRecord, leaseExpiresAt: number, lastProcessedSeq: number): Promise<boolean> {
    return renewSession(this.#table, record.zone, record.agentId, record.sessionId, leaseExpiresAt, lastProcessedSeq);
  }

  async close(record: SessionRecord, reason: string, now: number, lastProcessedSeq: number): Promise<void> {
    await endSession(this.#table, record.zone, record.agentId, record.sessionId, now, reason, lastProcessedSeq);
  }
}
