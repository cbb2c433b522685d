/**
 * What one replica writes to an account item, decided from the item, the agents this replica
 * serves, and which agents are live (pure: no I/O). Every replica runs the same rules, and every
 * write is conditional on the version it was decided from, so two replicas never undo each other:
 *
 * - **entries** (`agents[agentId]`): before an account goes to one of this replica's agents, its
 *   entry records the generation handed out (`assigned`), so the agent's answer can be checked;
 *   an agent that should no longer hold the account gets a `removing` entry until it confirms;
 *   entries of agents gone for longer than the hand-over grace are dropped.
 * - **caching**: exactly one agent per account caches it (`cachingAgentId`). It keeps the role while
 *   it is live (or within the grace) and has not refused the current generation; otherwise a live
 *   agent of the account takes over, preferring one that confirmed, then the one caching the fewest
 *   accounts, then one picked by a hash of the account and agent names (the same on every replica,
 *   so replicas settling a departed agent's accounts at once pick alike and spread them), and
 *   `cachingEpoch` is raised, so cache data carrying the old epoch is refused from then on. A role also moves when the caching spread (spread.ts) hands it
 *   to an agent below its share, only while it is still where that plan found it.
 * - **state** (migrated accounts only): `ACTIVE` while at least one agent holds the account,
 *   `FAILED` once every agent it went to has refused it, or when no agent is there to hold it.
 */
import type { AccountRecord, AgentResult } from '../../shared/accounts/model.ts';
import type { AccountChanges } from '../../shared/table/accounts/records.ts';
import { assignmentGeneration, isMigrated, wantedAnywhere, wantedBy, type AgentPlace } from './wanted.ts';

export interface Presence {
  /** Agents with a live session (from the table, and this replica's own): where each is. */
  live: ReadonlyMap<string, AgentPlace>;
  /** Agents gone for less than the hand-over grace: they keep their entries and caching role. */
  inGrace: ReadonlySet<string>;
  /**
   * When the session items behind this view were read, less the clock skew allowed between replicas.
   * An entry written since was written by a replica that saw its agent live after this view was
   * taken (the agent came back through another replica), so this view does not drop it.
   */
  readSince: number;
}

export interface Answer {
  agentId: string;
  ok: boolean;
  message: string;
  generation: number;
}

export interface PlanInput {
  record: AccountRecord;
  now: number;
  /** This replica's welcomed sessions: where each agent is. */
  local: ReadonlyMap<string, AgentPlace>;
  presence: Presence;
  /** An agent's answer to apply first (already checked to be for the current generation). */
  answer?: Answer;
  /** How many caching roles an agent holds, as this replica knows: a takeover goes to the least loaded. */
  roles?: (agentId: string) => number;
  /** A move planned by the caching spread (spread.ts). */
  handOff?: HandOff;
}

/** Move the caching role from `from` to `to`, only if `from` still holds it and `to` confirmed the current generation. */
export interface HandOff {
  from: string;
  to: string;
}

const NO_AGENT = 'no agent is connected';

function pending(e: AgentResult): boolean {
  return !e.removing && (e.generation ?? 0) < (e.assigned ?? 0);
}

/** Order of preference for a new caching agent: confirmed at this generation, confirmed earlier, waiting. */
function rank(e: AgentResult | undefined, generation: number): number {
  if (e === undefined || e.removing) return 2;
  if (e.ok && e.generation === generation) return 0;
  return e.ok ? 1 : 2;
}

/** FNV-1a of the account and agent names: a stable order among equally loaded agents that differs from account to account. */
function tieBreak(account: string, agentId: string): number {
  let h = 0x811c9dc5;
  for (const c of `${account}\u0000${agentId}`) h = Math.imul(h ^ (c.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return h;
}

export function planAccount(input: PlanInput): AccountChanges | undefined {
  const { record, now, local, presence, answer, handOff } = input;
  const roles = input.roles ?? (() => 0);
  const generation = assignmentGeneration(record);
  const wanted = wantedBy(record);
  const entries = new Map(Object.entries(record.agents));
  const set = new Set<string>();
  const removed = new Set<string>();
  const put = (e: AgentResult) => {
    entries.set(e.agentId, e);
    set.add(e.agentId);
    removed.delete(e.agentId);
  };

  if (answer !== undefined) {
    const e = entries.get(answer.agentId) as AgentResult;
    put({ ...e, ok: answer.ok, message: answer.message, generation: answer.generation, at: now });
  }

  for (const [agentId, place] of local) {
    const e = entries.get(agentId);
    if (wanted(agentId, place)) {
      if (e === undefined || e.removing || (e.assigned ?? 0) < generation) {
        const kept = e !== undefined && !e.removing ? e : undefined;
        put({
          agentId,
          caching: false,
          ok: kept?.ok ?? false,
          ...(kept?.message === undefined ? {} : { message: kept.message }),
          ...(kept?.generation === undefined ? {} : { generation: kept.generation }),
          assigned: generation,
          at: now,
        });
      }
    } else if (e !== undefined && !e.removing) {
      put({ agentId, caching: false, ok: false, assigned: generation, removing: true, at: now });
    }
  }

  for (const agentId of [...entries.keys()]) {
    if (local.has(agentId) || presence.live.has(agentId) || presence.inGrace.has(agentId)) continue;
    if ((entries.get(agentId)?.at ?? 0) >= presence.readSince) continue;
    entries.delete(agentId);
    set.delete(agentId);
    removed.add(agentId);
  }

  // Live agents that should hold the account, this replica's first.
  const liveTargets: string[] = [];
  // For an agent both here and in the session items, the items' place counts.
  for (const [id, place] of local) if (wanted(id, presence.live.get(id) ?? place)) liveTargets.push(id);
  for (const [id, place] of presence.live) if (!local.has(id) && wanted(id, place)) liveTargets.push(id);

  const current = record.cachingAgentId;
  const epoch = record.cachingEpoch ?? 0;
  const refused = (id: string) => {
    const e = entries.get(id);
    return e !== undefined && !e.removing && e.generation === generation && !e.ok;
  };
  let caching = current;
  if (!wantedAnywhere(record)) {
    caching = undefined;
  } else {
    const stays =
      current !== undefined &&
      !refused(current) &&
      (liveTargets.includes(current) || (presence.inGrace.has(current) && entries.has(current) && entries.get(current)?.removing !== true));
    if (!stays) {
      const candidates = liveTargets
        .filter((id) => !refused(id))
        .sort(
          (a, b) =>
            rank(entries.get(a), generation) - rank(entries.get(b), generation) ||
            roles(a) - roles(b) ||
            tieBreak(record.name, a) - tieBreak(record.name, b) ||
            (a < b ? -1 : a > b ? 1 : 0),
        );
      caching = candidates[0] ?? current;
    } else if (handOff !== undefined && current === handOff.from && liveTargets.includes(handOff.to) && rank(entries.get(handOff.to), generation) === 0) {
      caching = handOff.to;
    }
  }

  for (const [agentId, e] of entries) {
    const want = agentId === caching && !e.removing;
    if (e.caching !== want) put({ ...e, caching: want });
  }

  const changes: AccountChanges = {};
  if (caching !== current) {
    changes.cachingAgentId = caching ?? null;
    if (caching !== undefined) changes.cachingEpoch = epoch + 1;
  }
  if (answer !== undefined) changes.lastAssignmentMsg = answer.message;

  if (isMigrated(record)) {
    const held = [...entries.values()].some((e) => e.ok && !e.removing);
    const waiting =
      [...entries.values()].some(pending) ||
      liveTargets.some((id) => {
        const e = entries.get(id);
        return e === undefined || e.removing === true || (e.assigned ?? 0) < generation;
      });
    if (held) {
      if (record.state !== 'ACTIVE') changes.state = 'ACTIVE';
    } else if (!waiting && record.state !== 'FAILED') {
      changes.state = 'FAILED';
      if (liveTargets.length === 0 && answer === undefined) {
        const zone = record.registration?.zoneId;
        changes.lastAssignmentMsg = zone === undefined ? `${NO_AGENT} to hold the account` : `${NO_AGENT} in zone ${zone} to hold the account`;
      }
    }
  }

  if (set.size > 0) changes.setAgents = [...set].map((id) => entries.get(id) as AgentResult);
  if (removed.size > 0) changes.removeAgents = [...removed];
  return Object.keys(changes).length === 0 ? undefined : changes;
}
