import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { liveSessions, type Session } from '../../shared/table/agents/sessions.ts';
import { heldAccountsByAgent, type HeldAccount } from '../../shared/table/agents/listing.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { canRead } from '../auth/access.ts';
import type { Caller } from '../auth/caller.ts';
import type { AgentView } from './schemas.ts';

export interface AgentDeps {
  table: TableRef;
  clock: Clock;
}

const iso = (ms: number) => new Date(ms).toISOString();

function toAgentView(session: Session, held: readonly HeldAccount[]): AgentView {
  return {
    agentId: session.agentId,
    zoneId: session.zoneId,
    ...(session.identity === undefined ? {} : { identity: session.identity }),
    version: session.agentVersion,
    replicaId: session.replicaId,
    connectedAt: iso(session.connectedAt),
    lastHeartbeatAt: iso(session.renewedAt ?? session.connectedAt),
    accounts: held.map((h) => ({ name: h.record.name, caching: h.caching })),
    caching: held.filter((h) => h.caching).length,
  };
}

/**
 * The live agents the caller may see, each with the accounts it may see. Account managers see every
 * agent and account; anyone else only agents holding an account they may read, listing only those.
 */
async function visibleAgents(deps: AgentDeps, caller: Caller, zoneId?: string): Promise<AgentView[]> {
  const [sessions, held] = await Promise.all([liveSessions(deps.table, deps.clock.now(), zoneId), heldAccountsByAgent(deps.table)]);
  const views: AgentView[] = [];
  for (const session of sessions) {
    const all = held.get(session.agentId) ?? [];
    const shown = caller.manager ? all : all.filter((h) => canRead(caller, h.record));
    if (!caller.manager && shown.length === 0) continue;
    views.push(toAgentView(session, shown));
  }
  return views;
}

/** GET list: one page of the visible live agents, by zone then agent id, and how many there are. */
export async function listAgents(deps: AgentDeps, caller: Caller, query: { page: number; limit: number; zoneId?: string }) {
  const all = await visibleAgents(deps, caller, query.zoneId);
  const start = (query.page - 1) * query.limit;
  return { items: all.slice(start, start + query.limit), page: query.page, limit: query.limit, total: all.length };
}

/** GET by id: the live agent; not found when there is none, or the caller may see none of its accounts. */
export async function getAgent(deps: AgentDeps, caller: Caller, agentId: string): Promise<AgentView> {
  const found = (await visibleAgents(deps, caller)).filter((a) => a.agentId === agentId);
  // The same agent id live in two zones at once is a hand-over in progress: the newest stream is the agent.
  const newest = found.sort((a, b) => (a.connectedAt < b.connectedAt ? 1 : -1))[0];
  if (newest === undefined) throw new VendorError('not_found', `no live agent with id "${agentId.slice(0, 253)}"`);
  return newest;
}
