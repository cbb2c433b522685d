/**
 * The caching epoch rule (ARCHITECTURE flow 4): the driver takes cache data for an account only from
 * the agent the account item names as `cachingAgentId`, at the item's `cachingEpoch`. The answer is
 * remembered for `ttlMs` so a stream of batches costs one read a second, not one per batch; an answer
 * that refuses is always read again with a strongly consistent read, so a takeover that was just
 * written is never refused for a stale copy.
 */
import type { Clock } from '../../shared/clock.ts';
import { getAccount } from '../../shared/table/accounts.ts';
import type { TableRef } from '../../shared/table/client.ts';

export type GateAnswer = { ok: true } | { ok: false; reason: string };

interface Holder {
  agentId: string | undefined;
  epoch: number | undefined;
  exists: boolean;
  readAt: number;
}

export class CachingGate {
  readonly #table: TableRef;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #holders = new Map<string, Holder>();

  constructor(table: TableRef, clock: Clock, ttlMs = 1000) {
    this.#table = table;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  async check(account: string, agentId: string, epoch: number): Promise<GateAnswer> {
    const cached = this.#holders.get(account);
    if (cached !== undefined && this.#clock.now() - cached.readAt < this.#ttlMs && judge(cached, agentId, epoch).ok) return { ok: true };
    const fresh = await this.#read(account);
    return judge(fresh, agentId, epoch);
  }

  async #read(account: string): Promise<Holder> {
    const item = await getAccount(this.#table, account, { consistent: true });
    const holder: Holder = { agentId: item?.cachingAgentId, epoch: item?.cachingEpoch, exists: item !== undefined, readAt: this.#clock.now() };
    this.#holders.set(account, holder);
    return holder;
  }
}

function judge(h: Holder, agentId: string, epoch: number): GateAnswer {
  if (!h.exists) return { ok: false, reason: 'the account does not exist' };
  if (h.agentId !== agentId) return { ok: false, reason: `agent ${agentId} is not the caching agent of the account (${h.agentId ?? 'none'} is)` };
  if (h.epoch !== epoch) return { ok: false, reason: `caching epoch ${epoch} is not the account's current one (${h.epoch ?? 'none'})` };
  return { ok: true };
}
