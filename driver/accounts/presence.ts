/**
 * Which agents are live, which are within the hand-over grace, and which are gone, as this replica
 * last read them from the session items, corrected at once by the streams it holds itself. Another
 * replica's view may lag by one sweep; decisions made from it are conditional writes, and the next
 * sweep corrects them.
 */
import { goneSince, type Session } from '../../shared/table/agents/sessions.ts';
import type { Presence } from './plan.ts';
import type { AgentPlace } from './wanted.ts';

/** Where the session item says its agent is; items written before identities count as not `unzoned`. */
const placeOf = (s: Session): AgentPlace => ({ zone: s.zoneId, unzoned: s.unzoned === true });

export class PresenceTracker implements Presence {
  readonly #graceMs: number;
  readonly #skewMs: number;
  #live = new Map<string, AgentPlace>();
  #inGrace = new Set<string>();
  #readSince = Number.NEGATIVE_INFINITY;
  readonly #local = new Map<string, AgentPlace>();

  constructor(graceMs: number, skewMs: number) {
    this.#graceMs = graceMs;
    this.#skewMs = skewMs;
  }

  get readSince(): number {
    return this.#readSince;
  }

  get live(): ReadonlyMap<string, AgentPlace> {
    return this.#live;
  }

  get inGrace(): ReadonlySet<string> {
    return this.#inGrace;
  }

  /**
   * Takes in a fresh read of every session item, started at `readAt`; returns the items of agents
   * gone past the grace.
   */
  refresh(sessions: readonly Session[], now: number, readAt = now): Session[] {
    this.#readSince = readAt - this.#skewMs;
    const live = new Map<string, AgentPlace>(this.#local);
    const inGrace = new Set<string>();
    const over: Session[] = [];
    for (const s of sessions) if (goneSince(s, now) === undefined) live.set(s.agentId, placeOf(s));
    for (const s of sessions) {
      const since = goneSince(s, now);
      if (since === undefined || live.has(s.agentId)) continue;
      if (since > now - this.#graceMs) inGrace.add(s.agentId);
      else over.push(s);
    }
    this.#live = live;
    this.#inGrace = inGrace;
    return over.filter((s) => !inGrace.has(s.agentId));
  }

  /** One of this replica's streams was welcomed. */
  opened(agentId: string, place: AgentPlace): void {
    this.#local.set(agentId, place);
    this.#live.set(agentId, place);
    this.#inGrace.delete(agentId);
  }

  /** One of this replica's streams ended: the agent is within the grace until a sweep says otherwise. */
  closed(agentId: string): void {
    this.#local.delete(agentId);
    if (this.#live.delete(agentId)) this.#inGrace.add(agentId);
  }
}
