/**
 * Which agents an operation may go to: those with an open stream to this replica that hold its
 * account. What this replica knows first-hand decides: the accounts an agent said it holds in its
 * hello (its static accounts, and after a reconnect what it serves), and the assignments it
 * confirmed on this stream. Agents on other replicas are theirs to dispatch to.
 */
import type { AgentSession } from '../agent-session.ts';
import type { AssignmentResult__Output, DriverBody } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/client.ts';
import { liveSessions } from '../../shared/table/sessions.ts';

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
  /**
   * agentId → replica of every live session, from the table; undefined when sessions are not kept
   * there (a single driver), in which case no other replica can have lost an operation.
   */
  liveReplicas(now: number): Promise<ReadonlyMap<string, string> | undefined>;
}

export class SessionDirectory implements AgentDirectory {
  readonly #sessions: () => readonly AgentSession[];
  readonly #table: TableRef | undefined;
  /** sessionId → accounts whose assignment the agent confirmed (or refused) on that stream. */
  readonly #confirmed = new Map<string, Map<string, boolean>>();

  /** `table` when agent sessions are kept in the table (several replicas). */
  constructor(sessions: () => readonly AgentSession[], table?: TableRef) {
    this.#sessions = sessions;
    this.#table = table;
  }

  /** An agent's answer to an assignment on this replica. */
  assignmentResult(session: AgentSession, result: AssignmentResult__Output): void {
    let accounts = this.#confirmed.get(session.id);
    if (accounts === undefined) this.#confirmed.set(session.id, (accounts = new Map()));
    accounts.set(result.account, result.ok);
  }

  #holds(session: AgentSession, account: string): boolean {
    const confirmed = this.#confirmed.get(session.id)?.get(account);
    if (confirmed !== undefined) return confirmed;
    const hello = session.hello;
    return (hello?.staticAccounts ?? []).some((a) => a.name === account) || (hello?.heldAccounts ?? []).some((a) => a.name === account);
  }

  holders(account: string): readonly LocalAgent[] {
    return this.#sessions().filter((s) => this.#holds(s, account));
  }

  isOpen(sessionId: string): boolean {
    const open = this.#sessions().some((s) => s.id === sessionId);
    if (!open) this.#confirmed.delete(sessionId);
    return open;
  }

  async liveReplicas(now: number): Promise<ReadonlyMap<string, string> | undefined> {
    if (this.#table === undefined) return undefined;
    return new Map((await liveSessions(this.#table, now)).map((s) => [s.agentId, s.replicaId]));
  }
}
