/**
 * The caching epoch rule (docs/cache.md#the-drivers-side): the driver takes cache data for an account only from
 * the agent the account item names as `cachingAgentId`, at the item's `cachingEpoch`. The answer is
 * remembered for `ttlMs` so a stream of batches costs one read a second, not one per batch. Past that,
 * a positive answer younger than `maxStaleMs` is still used while a read refreshes it in the
 * background, so a table slowed by a burst of cache writes never holds up the stream; an answer that
 * refuses is always read again with a strongly consistent read, so a takeover that was just written
 * is never refused for a stale copy. A takeover therefore stops the old agent's batches within
 * `maxStaleMs` at worst. Besides the role, the sending stream must be at a place that may hold the
 * account at all (`placeAllows`: its zone, what its identity allows), so cache data is never taken
 * for another zone's account whatever agent id the stream uses.
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { Clock } from '../../shared/clock.ts';
import { getAccount } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { placeAllows, type AgentPlace } from '../accounts/wanted.ts';

export type GateAnswer = { ok: true } | { ok: false; reason: string };

interface Holder {
  agentId: string | undefined;
  epoch: number | undefined;
  record: AccountRecord | undefined;
  readAt: number;
}

/** Who sends cache data: the agent id and where its stream is. */
export interface CacheSender {
  agentId: string;
  place: AgentPlace;
}

export class CachingGate {
  readonly #table: TableRef;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxStaleMs: number;
  readonly #holders = new Map<string, Holder>();
  readonly #refreshing = new Map<string, Promise<Holder>>();

  constructor(table: TableRef, clock: Clock, ttlMs = 1000, maxStaleMs = 10 * ttlMs) {
    this.#table = table;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#maxStaleMs = maxStaleMs;
  }

  async check(account: string, sender: CacheSender, epoch: number): Promise<GateAnswer> {
    const cached = this.#holders.get(account);
    if (cached !== undefined && judge(cached, sender, epoch).ok) {
      const age = this.#clock.now() - cached.readAt;
      if (age < this.#ttlMs) return { ok: true };
      if (age < this.#maxStaleMs) {
        this.#refresh(account).catch(() => undefined);
        return { ok: true };
      }
    }
    return judge(await this.#refresh(account), sender, epoch);
  }

  /** The next check of `account` reads the table (the role may have moved). */
  forget(account: string): void {
    this.#holders.delete(account);
  }

  /** One read per account at a time; callers arriving meanwhile share it. */
  #refresh(account: string): Promise<Holder> {
    let pending = this.#refreshing.get(account);
    if (pending === undefined) {
      pending = this.#read(account).finally(() => this.#refreshing.delete(account));
      this.#refreshing.set(account, pending);
    }
    return pending;
  }

  async #read(account: string): Promise<Holder> {
    const item = await getAccount(this.#table, account, { consistent: true });
    const holder: Holder = { agentId: item?.cachingAgentId, epoch: item?.cachingEpoch, record: item, readAt: this.#clock.now() };
    this.#holders.set(account, holder);
    return holder;
  }
}

function judge(h: Holder, { agentId, place }: CacheSender, epoch: number): GateAnswer {
  if (h.record === undefined) return { ok: false, reason: 'the account does not exist' };
  if (h.agentId !== agentId) return { ok: false, reason: `agent ${agentId} is not the caching agent of the account (${h.agentId ?? 'none'} is)` };
  if (h.epoch !== epoch) return { ok: false, reason: `caching epoch ${epoch} is not the account's current one (${h.epoch ?? 'none'})` };
  if (!placeAllows(h.record, agentId, place)) return { ok: false, reason: `the account is not one an agent of zone ${JSON.stringify(place.zone)} with this identity may hold` };
  return { ok: true };
}
