import type { AccountSettings } from '../../accounts/settings.ts';
import type { TableRef } from '../core/client.ts';
import { syncSource, type SyncResult } from './sync.ts';

// The static accounts each agent announces are a definition source of their own, `agent:<agentId>`.

export function agentSourceId(agentId: string): string {
  return `agent:${agentId}`;
}

/**
 * The static accounts an agent announces at hello (`source: static-agent-config`, precedence 1000),
 * replacing what that agent announced before. With the announcing session's id, the source remembers
 * it, and a later sweep of an older session of the agent leaves the announcement alone.
 */
export function putAgentStaticAccounts(
  t: TableRef,
  agentId: string,
  zoneId: string,
  accounts: readonly AccountSettings[],
  now: number,
  sessionId?: string,
): Promise<SyncResult> {
  const lock = sessionId === undefined ? {} : { owner: sessionId };
  return syncSource(t, { id: agentSourceId(agentId), kind: 'static-agent-config', agentId, zoneId }, accounts, now, { lock });
}

/**
 * Removes everything an agent announced (when its session ends for good). With the ended session's id,
 * nothing is removed when a newer session of the agent has announced since (`superseded`).
 */
export function removeAgentStaticAccounts(t: TableRef, agentId: string, now: number, sessionId?: string): Promise<SyncResult> {
  const lock = sessionId === undefined ? {} : { ifOwner: sessionId };
  return syncSource(t, { id: agentSourceId(agentId), kind: 'static-agent-config', agentId }, [], now, { lock });
}
