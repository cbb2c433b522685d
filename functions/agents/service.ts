import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { readHeldAccounts, type HeldEntry } from '../../shared/table/accounts/held.ts';
import { liveSessions, type Session } from '../../shared/table/agents/sessions.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { hiddenNames } from '../accounts/service.ts';
import type { Caller } from '../auth/caller.ts';
import type { AgentPage, AgentView } from '../../shared/answers/agents.ts';

export interface AgentDeps {
  table: TableRef;
  clock: Clock;
}

const iso = (ms: number) => new Date(ms).toISOString();

function toAgentView(session: Session, held: readonly HeldEntry[]): AgentView {
  return {
    agentId: session.agentId,
    zoneId: session.zoneId,
    ...(session.identity === undefined ? {} : { identity: session.identity }),
    version: session.agentVersion,
    replicaId: session.replicaId,
    connectedAt: iso(session.connectedAt),
    lastHeartbeatAt: iso(session.renewedAt ?? session.connectedAt),
    accounts: held.map((h) => ({ name: h.name, caching: h.caching })),
    caching: held.filter((h) => h.caching).length,
  };
}

/**
 * The live agents the caller may see, by zone then agent id, each with the accounts it may see, for
 * the agents at [start, start + count). The sessions come from one Query of the live sessions; what
 * each agent holds from its own held index partition (shared/table/accounts/held.ts), one Query per
 * agent. Account managers see every agent, so only the page's agents are read: the cost is the
 * sessions and the page's holdings, not the accounts. Anyone else sees only agents holding an account
 * they may read, which takes every live agent's holdings and the access index to decide.
 */
async function visibleAgents(deps: AgentDeps, caller: Caller, range: { start: number; count: number }, zoneId?: string): Promise<{ views: AgentView[]; total: number }> {
  const [sessions, hidden] = await Promise.all([liveSessions(deps.table, deps.clock.now(), zoneId), hiddenNames(deps, caller)]);
  const heldBy = (session: Session) => readHeldAccounts(deps.table, session.agentId);
  if (caller.manager) {
    const page = sessions.slice(range.start, range.start + range.count);
    const held = await Promise.all(page.map(heldBy));
    return { views: page.map((s, i) => toAgentView(s, held[i] ?? [])), total: sessions.length };
  }
  const held = await Promise.all(sessions.map(heldBy));
  const visible = sessions.flatMap((s, i) => {
    const shown = (held[i] ?? []).filter((h) => !hidden.has(h.name));
    return shown.length === 0 ? [] : [toAgentView(s, shown)];
  });
  return { views: visible.slice(range.start, range.start + range.count), total: visible.length };
}

/** GET list: one page of the visible live agents, by zone then agent id, and how many there are. */
export async function listAgents(deps: AgentDeps, caller: Caller, query: { page: number; limit: number; zoneId?: string }): Promise<AgentPage> {
  const { views, total } = await visibleAgents(deps, caller, { start: (query.page - 1) * query.limit, count: query.limit }, query.zoneId);
  return { items: views, page: query.page, limit: query.limit, total };
}

/** GET by id: the live agent; not found when there is none, or the caller may see none of its accounts. */
export async function getAgent(deps: AgentDeps, caller: Caller, agentId: string): Promise<AgentView> {
  const [sessions, hidden] = await Promise.all([liveSessions(deps.table, deps.clock.now()), hiddenNames(deps, caller)]);
  // The same agent id live in two zones at once is a hand-over in progress: the newest stream is the agent.
  const session = sessions.filter((s) => s.agentId === agentId).sort((a, b) => b.connectedAt - a.connectedAt)[0];
  const shown = session === undefined ? [] : (await readHeldAccounts(deps.table, agentId)).filter((h) => !hidden.has(h.name));
  if (session === undefined || (!caller.manager && shown.length === 0)) throw new VendorError('not_found', `no live agent with id "${agentId.slice(0, 253)}"`);
  return toAgentView(session, shown);
}
