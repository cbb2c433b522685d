/**
 * One replica's round of the caching spread (spread.ts): for every pool of accounts with an agent
 * connected here, once this replica's agents of the pool have confirmed every account of it (a pool
 * still being handed out is left alone, so roles do not move while the agents are catching up), the
 * moves of the pool's plan that go to this replica's agents. Read from the
 * replica's cache of account items and its view of who is live; each move is then made by a settle
 * of its account, a write conditional on the item's version that makes it only while the role is
 * still where the plan found it (plan.ts, `handOff`).
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { Presence } from './plan.ts';
import type { ReplicaAccounts } from './replica-accounts.ts';
import { planSpread, type SpreadMove } from './spread.ts';
import { assignmentGeneration, isMigrated, type AgentPlace } from './wanted.ts';

/** The live agents that hold a pool's accounts: those of the zone, or, for accounts of no zone (`''`), those whose identity allows them. */
function inPool(zone: string, place: AgentPlace): boolean {
  return zone === '' ? place.unzoned : place.zone === zone;
}

/** The agent answered the account's current generation, either way. */
function answered(record: AccountRecord, agentId: string): boolean {
  const e = record.agents[agentId];
  return e !== undefined && e.removing !== true && e.generation === assignmentGeneration(record);
}

/** The agent confirmed the account's current generation, so it can cache the account at once. */
function confirmedBy(record: AccountRecord, agentId: string): boolean {
  const e = record.agents[agentId];
  return e !== undefined && e.ok && e.removing !== true && e.generation === assignmentGeneration(record);
}

export interface PoolMoves {
  zone: string;
  moves: SpreadMove[];
}

export function spreadMovesHere(cache: ReplicaAccounts, presence: Presence, isLocal: (agentId: string) => boolean): PoolMoves[] {
  const out: PoolMoves[] = [];
  for (const [zone, names] of cache.zones()) {
    const agents = [...presence.live].filter(([, place]) => inPool(zone, place)).map(([id]) => id);
    const mine = agents.filter(isLocal);
    if (mine.length === 0) continue;
    const roles = new Map<string, string | undefined>();
    const records = new Map<string, AccountRecord>();
    let caughtUp = true;
    for (const name of names) {
      const record = cache.get(name);
      if (record === undefined || !isMigrated(record)) continue;
      records.set(name, record);
      roles.set(name, record.cachingAgentId);
      caughtUp &&= mine.every((id) => answered(record, id));
    }
    if (!caughtUp) continue;
    // Another replica's agents count as able to take any role: this cache does not keep their answers,
    // and assuming the same for them as their own replica does keeps every replica's plan alike.
    const canTake = (account: string, agent: string) => !isLocal(agent) || confirmedBy(records.get(account) as AccountRecord, agent);
    const moves = planSpread({ roles, agents, canTake });
    const here = (moves ?? []).filter((m) => isLocal(m.to));
    if (here.length > 0) out.push({ zone, moves: here });
  }
  return out;
}
