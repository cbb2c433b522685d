/**
 * The caching epoch rule (ARCHITECTURE flow 4): the driver takes cache data for an account only from
 * the agent the account item names as `cachingAgentId`, at the item's `cachingEpoch`. The answer is
 * remembered for `ttlMs` so a stream of batches costs one read a second, not one per batch. Past that,
 * a positive answer younger than `maxStaleMs` is still used while a read refreshes it in the
 * background, so a table slowed by a burst of cache writes never holds up the stream; an answer that
 * refuses is always read again with a strongly consistent read, so a takeover that was just written
 * is never refused for a stale copy. A takeover therefore stops the old agent's batches within
 * `maxStaleMs` at worst.
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
  readonly #maxStaleMs: number;
  readonly #holders = new Map<string, Holder>();
  readonly #refreshing = new Map<string, Promise<Holder>>();

  constructor(table: TableRef, clock: Clock, ttlMs = 1000, maxStaleMs = 10 * ttlMs) {
    this.#table = table;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#maxStaleMs = maxStaleMs;
  }

  async check(account: string, agentId: string, epoch: number): Promise<GateAnswer> {
    const cached = this.#holders.get(account);
    if (cached !== undefined && judge(cached, agentId, epoch).ok) {
      const age = this.#clock.now() - cached.readAt;
      if (age < this.#ttlMs) return { ok: true };
      if (age < this.#maxStaleMs) {
        this.#refresh(account).catch(() => undefined);
        return { ok: true };
      }
    }
    return judge(await this.#refresh(account), agentId, epoch);
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
