/**
 * A cap on the full lists running at once in the agent, across all its accounts: a list of a large
 * kind parses megabytes of JSON, and letting every kind of every account list at the same moment
 * (at start, or after an API server restart made every watch expire) would multiply the agent's
 * peak memory and the API server's load.
 *
 * Waiters are served largest first (by the objects each expects to list: a scope listing again after
 * a 410 by what its last list held, a first list by 0), so that the longest lists of a burst of
 * relists start as early as they can instead of running alone at the end. Among equals, the lists of
 * the group (the account) that asked first go first, then in arrival order: an agent starting many
 * accounts finishes them one after another, the first complete early, rather than every account
 * late and all together.
 */
export class ListGate {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: { grant: () => void; weight: number; rank: number }[] = [];
  /** Per group with lists waiting or running: the order it first asked in, and how many it has. */
  readonly #groups = new Map<string, { rank: number; lists: number }>();
  #nextRank = 0;

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /**
   * Resolves with the release function once a slot is free; rejects when `signal` aborts first.
   * `weight` is the number of objects the list is expected to bring (0 when not known); `group` names
   * the account the list is of.
   */
  acquire(signal?: AbortSignal, weight = 0, group = ''): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const g = this.#join(group);
    if (this.#running < this.#limit) {
      this.#running++;
      return Promise.resolve(this.#releaser(group));
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#running++;
        resolve(this.#releaser(group));
      };
      const entry = { grant, weight, rank: g.rank };
      const onAbort = () => {
        const i = this.#waiting.indexOf(entry);
        if (i >= 0) this.#waiting.splice(i, 1);
        this.#leave(group);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const after = this.#waiting.findIndex((w) => w.weight < weight || (w.weight === weight && w.rank > entry.rank));
      if (after < 0) this.#waiting.push(entry);
      else this.#waiting.splice(after, 0, entry);
    });
  }

  get running(): number {
    return this.#running;
  }

  #join(group: string): { rank: number; lists: number } {
    let g = this.#groups.get(group);
    if (g === undefined) this.#groups.set(group, (g = { rank: this.#nextRank++, lists: 0 }));
    g.lists++;
    return g;
  }

  #leave(group: string): void {
    const g = this.#groups.get(group);
    if (g !== undefined && --g.lists === 0) this.#groups.delete(group);
  }

  #releaser(group: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#leave(group);
      this.#waiting.shift()?.grant();
    };
  }
}

/** The gate of one account's lists: each tells the agent's gate whose it is. */
export function accountListSlots(gate: Pick<ListGate, 'acquire'>, account: string): Pick<ListGate, 'acquire'> {
  return { acquire: (signal, weight) => gate.acquire(signal, weight, account) };
}

/**
 * Lists the agent runs at once when nothing else is said. A list holds its slot while it parses, and
 * a first list of a small cluster's kind is mostly waiting for the API server and the decoding; an
 * agent caching many small clusters keeps 16 going (a WatchList holds one batch of lines decoding at
 * a time, a paged list one page of 500 objects).
 */
export const DEFAULT_CONCURRENT_LISTS = 16;

const gates = new WeakMap<object, ListGate>();

/** The one gate of an agent (keyed by its context object), made on first use. */
export function listGateOf(owner: object, limit = DEFAULT_CONCURRENT_LISTS): ListGate {
  let gate = gates.get(owner);
  if (gate === undefined) gates.set(owner, (gate = new ListGate(limit)));
  return gate;
}
