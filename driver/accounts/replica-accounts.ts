/**
 * This replica's copy of the account items it has read or written, with the migrated accounts
 * indexed by zone, so an agent saying hello finds its zone's accounts without scanning them all, and
 * the caching roles counted per agent, so a takeover can go to the agent caching the fewest.
 * Only a cache: every decision made from it is a write conditional on the item's version.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { isActivated } from './wanted.ts';

/** Index key of the accounts that go to every zone. */
const ANY_ZONE = '';

export class ReplicaAccounts {
  readonly #records = new Map<string, AccountRecord>();
  readonly #byZone = new Map<string, Set<string>>();
  readonly #roles = new Map<string, number>();

  get(name: string): AccountRecord | undefined {
    return this.#records.get(name);
  }

  names(): IterableIterator<string> {
    return this.#records.keys();
  }

  set(record: AccountRecord): void {
    this.delete(record.name);
    this.#records.set(record.name, record);
    this.#countRole(record.cachingAgentId, 1);
    if (!isActivated(record)) return;
    const zone = record.registration?.zoneId ?? ANY_ZONE;
    let names = this.#byZone.get(zone);
    if (names === undefined) this.#byZone.set(zone, (names = new Set()));
    names.add(record.name);
  }

  delete(name: string): void {
    const old = this.#records.get(name);
    if (old === undefined) return;
    this.#records.delete(name);
    this.#countRole(old.cachingAgentId, -1);
    const zone = old.registration?.zoneId ?? ANY_ZONE;
    const names = this.#byZone.get(zone);
    names?.delete(name);
    if (names?.size === 0) this.#byZone.delete(zone);
  }

  /** How many of the accounts here name `agentId` as their caching agent. */
  rolesOf(agentId: string): number {
    return this.#roles.get(agentId) ?? 0;
  }

  /** The zones with activated accounts (`''`: the accounts pinned to no zone), and those accounts. */
  zones(): IterableIterator<[string, ReadonlySet<string>]> {
    return this.#byZone.entries();
  }

  #countRole(agentId: string | undefined, by: number): void {
    if (agentId === undefined) return;
    const n = (this.#roles.get(agentId) ?? 0) + by;
    if (n === 0) this.#roles.delete(agentId);
    else this.#roles.set(agentId, n);
  }

  /** Activated accounts that may go to an agent of `zone`: those of the zone and those without one. */
  activatedFor(zone: string): string[] {
    return [...(this.#byZone.get(zone) ?? []), ...(zone === ANY_ZONE ? [] : (this.#byZone.get(ANY_ZONE) ?? []))];
  }
}
