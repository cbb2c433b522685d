/**
 * This replica's welcomed sessions, the newest per agent, indexed by zone and by the accounts their
 * agents hold, so settling one account looks only at the agents it can concern instead of at every
 * agent connected to the replica.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { AgentSession, Holding } from '../agent-session.ts';
import { isMigrated } from './wanted.ts';

export class LocalSessions {
  readonly #byAgent = new Map<string, AgentSession>();
  readonly #byZone = new Map<string, Set<string>>();
  readonly #holders = new Map<string, Set<string>>();

  opened(session: AgentSession): void {
    const previous = this.#byAgent.get(session.agentId);
    if (previous !== undefined) this.#forget(previous);
    this.#byAgent.set(session.agentId, session);
    let zone = this.#byZone.get(session.zone);
    if (zone === undefined) this.#byZone.set(session.zone, (zone = new Set()));
    zone.add(session.agentId);
    for (const name of session.holdings.keys()) this.#index(name, session.agentId, true);
  }

  /** False when a newer stream of the agent is still here. */
  closed(session: AgentSession): boolean {
    if (this.#byAgent.get(session.agentId) !== session) return false;
    this.#forget(session);
    return true;
  }

  has(agentId: string): boolean {
    return this.#byAgent.has(agentId);
  }

  /** Records what `session` holds of `account` (undefined: nothing). */
  hold(session: AgentSession, account: string, holding: Holding | undefined): void {
    if (holding === undefined) session.holdings.delete(account);
    else session.holdings.set(account, holding);
    if (this.#byAgent.get(session.agentId) === session) this.#index(account, session.agentId, holding !== undefined);
  }

  /**
   * The sessions an account can concern: agents that hold it or have an entry in it, the agents of
   * its zone (every agent when it has none) while it is migrated, and the agents that announced it.
   */
  concerned(name: string, record: AccountRecord | undefined): AgentSession[] {
    const ids = new Set<string>(this.#holders.get(name) ?? []);
    if (record !== undefined) {
      for (const id of Object.keys(record.agents)) ids.add(id);
      for (const def of Object.values(record.defs)) if (def.kind === 'static-agent-config' && def.agentId !== undefined) ids.add(def.agentId);
      if (isMigrated(record)) {
        const zone = record.registration?.zoneId;
        for (const id of zone === undefined ? this.#byAgent.keys() : (this.#byZone.get(zone) ?? [])) ids.add(id);
      }
    }
    const out: AgentSession[] = [];
    for (const id of ids) {
      const s = this.#byAgent.get(id);
      if (s !== undefined) out.push(s);
    }
    return out;
  }

  /** Every account some session here holds. */
  heldAccounts(): string[] {
    return [...this.#holders.keys()];
  }

  #index(account: string, agentId: string, holds: boolean): void {
    let set = this.#holders.get(account);
    if (holds) {
      if (set === undefined) this.#holders.set(account, (set = new Set()));
      set.add(agentId);
    } else if (set !== undefined) {
      set.delete(agentId);
      if (set.size === 0) this.#holders.delete(account);
    }
  }

  #forget(session: AgentSession): void {
    this.#byAgent.delete(session.agentId);
    const zone = this.#byZone.get(session.zone);
    zone?.delete(session.agentId);
    if (zone?.size === 0) this.#byZone.delete(session.zone);
    for (const name of session.holdings.keys()) this.#index(name, session.agentId, false);
  }
}
