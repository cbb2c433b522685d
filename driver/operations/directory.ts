/**
 * Which agents an operation may go to: those with an open stream to this replica that hold its
 * account (the stream's `holdings`, kept by the assignment module: confirmed assignments, and what
 * the agent announced in its hello once the account item confirms it). Agents on other replicas are
 * theirs to dispatch to.
 */
import type { AgentSession } from '../agent-session.ts';
import type { DriverBody } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { liveSessions } from '../../shared/table/agents/sessions.ts';

export interface LocalAgent {
  readonly agentId: string;
  /** The stream's session id. */
  readonly id: string;
  send(out: DriverBody): Promise<void>;
}

export interface AgentDirectory {
  /** Agents with an open stream to this replica that hold `account`. */
  holders(account: string): readonly LocalAgent[];
  /** Whether stream `sessionId` is open on this replica. */
  isOpen(sessionId: string): boolean;
  /** The session ids of every live agent stream, on any replica (from the table). */
  liveSessionIds(now: number): Promise<ReadonlySet<string>>;
}

export class SessionDirectory implements AgentDirectory {
  readonly #sessions: () => readonly AgentSession[];
  readonly #table: TableRef;

  constructor(sessions: () => readonly AgentSession[], table: TableRef) {
    this.#sessions = sessions;
    this.#table = table;
  }

  holders(account: string): readonly LocalAgent[] {
    return this.#sessions().filter((s) => s.open && s.holdings.get(account)?.state === 'held');
  }

  isOpen(sessionId: string): boolean {
    return this.#sessions().some((s) => s.id === sessionId && s.open);
  }

  async liveSessionIds(now: number): Promise<ReadonlySet<string>> {
    return new Set((await liveSessions(this.#table, now)).flatMap((s) => (s.sessionId === undefined ? [] : [s.sessionId])));
  }
}
