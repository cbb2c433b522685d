/**
 * What one of this replica's agents must be told about an account, from the account item (after
 * this replica's write) and what the agent's stream holds (pure). Driver messages are rebuilt this
 * way rather than replayed: an agent that reconnects says what it holds, and gets only the difference.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { DriverBody } from '../../shared/protocol/messages.ts';
import type { Holding } from '../agent-session.ts';
import { assignmentGeneration, wantedFor, type AgentPlace } from './wanted.ts';

export type AssignmentMessage = Extract<DriverBody, { kind: 'assignAccount' | 'removeAccount' }>;

export function messageFor(
  account: string,
  record: AccountRecord | undefined,
  agentId: string,
  place: AgentPlace,
  holding: Holding | undefined,
): AssignmentMessage | undefined {
  const holds = holding !== undefined && holding.state !== 'removing';
  const want = record === undefined ? undefined : wantedFor(record, agentId, place);
  if (record === undefined || want === undefined) {
    if (!holds) return undefined;
    const generation = record === undefined ? holding.generation + 1 : assignmentGeneration(record);
    return { kind: 'removeAccount', body: { account, generation } };
  }
  const generation = assignmentGeneration(record);
  const caching = record.cachingAgentId === agentId;
  const cachingEpoch = record.cachingEpoch ?? 0;
  if (holds && holding.generation === generation) {
    // Refused at this generation: tried again at the next one, or on the agent's next stream.
    if (holding.state === 'failed') return undefined;
    const sameRole = holding.caching === caching && (!caching || holding.cachingEpoch === cachingEpoch);
    const entry = record.agents[agentId];
    const answered = entry !== undefined && entry.removing !== true && entry.generation === generation;
    if (sameRole && (holding.state === 'sent' || answered)) return undefined;
  }
  return { kind: 'assignAccount', body: { ...want, caching, cachingEpoch } };
}
