import type { AssignmentResult__Output } from '../shared/protocol/messages.ts';
import { protocolError } from '../shared/protocol/problems.ts';
import type { ResultOutcome, ResumeState, SessionRecord, SessionStore } from './session-store.ts';

export interface StoredSession extends SessionRecord {
  closedReason?: string;
  lastProcessedSeq: number;
}

export interface StoredAssignment {
  generation: number;
  result?: AssignmentResult__Output;
}

/**
 * The session store of a single driver process, kept in memory. Sessions stay after they close
 * (with the reason) so a reconnecting agent's previous session can be resumed.
 */
export class MemorySessionStore implements SessionStore {
  readonly sessions = new Map<string, StoredSession>();
  /** agentId → account → latest assignment and its answer. */
  readonly assignments = new Map<string, Map<string, StoredAssignment>>();

  async open(record: SessionRecord, previousSessionId: string): Promise<ResumeState> {
    this.sessions.set(record.sessionId, { ...record, lastProcessedSeq: 0 });
    const previous = previousSessionId === '' ? undefined : this.sessions.get(previousSessionId);
    if (previous === undefined || previous.agentId !== record.agentId) return { known: false, lastProcessedSeq: 0 };
    return { known: true, lastProcessedSeq: previous.lastProcessedSeq };
  }

  async renew(sessionId: string, leaseExpiresAt: number): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (s !== undefined && s.closedReason === undefined) s.leaseExpiresAt = leaseExpiresAt;
  }

  async close(sessionId: string, reason: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (s !== undefined) s.closedReason ??= reason;
  }

  async assigned(agentId: string, account: string, generation: number): Promise<void> {
    let byAccount = this.assignments.get(agentId);
    if (byAccount === undefined) this.assignments.set(agentId, (byAccount = new Map()));
    const current = byAccount.get(account);
    if (current === undefined || current.generation < generation) byAccount.set(account, { generation });
  }

  async recordResult(
    agentId: string,
    sessionId: string,
    seq: number,
    result: AssignmentResult__Output,
  ): Promise<ResultOutcome> {
    const assignment = this.assignments.get(agentId)?.get(result.account);
    if (assignment === undefined) {
      throw protocolError('unknown_account', `assignment result for account ${result.account}, which was not assigned to this agent`, {
        details: { account: result.account, seq },
      });
    }
    if (result.generation > assignment.generation) {
      throw protocolError(
        'unknown_account',
        `assignment result for generation ${result.generation} of account ${result.account}, which was never assigned (latest: ${assignment.generation})`,
        { details: { account: result.account, seq } },
      );
    }
    const session = this.sessions.get(sessionId);
    if (session !== undefined) session.lastProcessedSeq = Math.max(session.lastProcessedSeq, seq);
    if (result.generation < assignment.generation) return 'stale';
    assignment.result = result;
    return 'recorded';
  }

  openSessions(): StoredSession[] {
    return [...this.sessions.values()].filter((s) => s.closedReason === undefined);
  }
}
