/**
 * Which replica writes the hand-out of an account whose waiting agents are on several replicas.
 *
 * Every replica reads the same work feed entry at about the same moment (the API wakes them all), so
 * when each wrote the entries of its own agents, and each one the caching election, the replicas'
 * conditional writes refused each other: one write held, the others were read again and written
 * again. Instead, the replica of the waiting agent with the smallest id leads: it writes the entries
 * of every live agent that waits for the account, its own and the other replicas', with the caching
 * election, in one write. The others leave the account to it (docs/protocol.md#assignment-across-replicas):
 * a replica with a waiting agent of its own settles the account again a little later, finds its
 * agent's entry written and sends it the assignment; should the lead not have written by then (its
 * replica gone, its view of the sessions older), it waits once or twice more, then writes itself. A
 * replica that must take the account off one of its own agents (only it writes its agents' removals)
 * writes at once, as every replica did before. The
 * write stays conditional on the item's version either way, so a replica that acts at the same
 * moment as the lead still cannot undo it.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { Presence } from './plan.ts';
import { assignmentGeneration, wantedBy, type AgentPlace, type WantedBy } from './wanted.ts';

export interface HandOutLead {
  /** This replica writes the account now. */
  leads: boolean;
  /** Agents of other replicas whose entries this replica writes as well, when it leads. */
  others: ReadonlyMap<string, AgentPlace>;
  /** One of this replica's agents waits for the account: when it does not lead, it looks again. */
  ownWaiting: boolean;
}

/** Live agents that should hold the account and have no entry for its current generation yet. */
function waitingAgents(record: AccountRecord, wanted: WantedBy, local: ReadonlyMap<string, AgentPlace>, presence: Presence): Map<string, AgentPlace> {
  const generation = assignmentGeneration(record);
  const waiting = new Map<string, AgentPlace>();
  const consider = (agentId: string, place: AgentPlace) => {
    if (!wanted(agentId, place)) return;
    const e = record.agents[agentId];
    if (e === undefined || e.removing === true || (e.assigned ?? 0) < generation) waiting.set(agentId, place);
  };
  // This replica's view of its own agents wins over the session items'.
  for (const [agentId, place] of presence.live) if (!local.has(agentId)) consider(agentId, place);
  for (const [agentId, place] of local) consider(agentId, place);
  return waiting;
}

/** One of this replica's agents holds an entry it should no longer hold: its removal is this replica's to write. */
function ownRemoval(record: AccountRecord, wanted: WantedBy, local: ReadonlyMap<string, AgentPlace>): boolean {
  for (const [agentId, place] of local) {
    const e = record.agents[agentId];
    if (e !== undefined && e.removing !== true && !wanted(agentId, place)) return true;
  }
  return false;
}

export function handOutLead(record: AccountRecord, local: ReadonlyMap<string, AgentPlace>, presence: Presence): HandOutLead {
  const wanted = wantedBy(record);
  const waiting = waitingAgents(record, wanted, local, presence);
  // Only this replica takes its agents' entries off an account (a zone changed): it writes at once, as before.
  if (ownRemoval(record, wanted, local)) return { leads: true, others: new Map(), ownWaiting: [...waiting.keys()].some((id) => local.has(id)) };
  const ownWaiting = [...waiting.keys()].some((id) => local.has(id));
  const first = [...waiting.keys()].sort()[0];
  if (first === undefined) return { leads: true, others: new Map(), ownWaiting };
  if (!local.has(first)) return { leads: false, others: new Map(), ownWaiting };
  return { leads: true, others: new Map([...waiting].filter(([id]) => !local.has(id))), ownWaiting };
}
