/**
 * Where the driver keeps what outlives one stream: agent sessions with their leases, what each
 * agent was handed, and each agent's answers. The table-backed store implements this for several
 * replicas; `MemorySessionStore` implements it in-process for a single driver.
 */
import type { AssignmentResult__Output, HeldAccount__Output, StaticAccount__Output } from '../shared/protocol/messages.ts';

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
  staticAccounts: StaticAccount__Output[];
  heldAccounts: HeldAccount__Output[];
}

/** What the driver knows of an agent's previous session, for Welcome.resume. */
export interface ResumeState {
  known: boolean;
  lastProcessedSeq: number;
}

export type ResultOutcome = 'recorded' | 'stale';

export interface SessionStore {
  /** Records a session once its agent has said hello; tells what is known of `previousSessionId`. */
  open(record: SessionRecord, previousSessionId: string): Promise<ResumeState>;
  renew(sessionId: string, leaseExpiresAt: number): Promise<void>;
  close(sessionId: string, reason: string): Promise<void>;
  /** Records that `account` at `generation` was handed to `agentId`. */
  assigned(agentId: string, account: string, generation: number): Promise<void>;
  /**
   * Records an agent's answer, received as reliable message `seq` of `sessionId`. Answers for an
   * older generation than the latest handed out are `stale` and change nothing. Throws a
   * `protocol_error` (problem `unknown_account`) for an account never handed to this agent or a
   * generation never handed out.
   */
  recordResult(agentId: string, sessionId: string, seq: number, result: AssignmentResult__Output): Promise<ResultOutcome>;
}
