/**
 * A cap on the full lists running at once in the agent, across all its accounts: a list of a large
 * kind parses megabytes of JSON, and letting every kind of every account list at the same moment
 * (at start, or after an API server restart made every watch expire) would multiply the agent's
 * peak memory and the API server's load.
 *
 * Waiters are served largest first (by the objects each expects to list: a scope listing again after
 * a 410 by what its last list held, a first list by 0), in arrival order among equals, so that the
 * longest lists of a burst of relists start as early as they can instead of running alone at the end.
 */
export class ListGate {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: { grant: () => void; weight: number }[] = [];

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /**
   * Resolves with the release function once a slot is free; rejects when `signal` aborts first.
   * `weight` is the number of objects the list is expected to bring (0 when not known).
   */
  acquire(signal?: AbortSignal, weight = 0): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.#limit) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#running++;
        resolve(this.#releaser());
      };
      const entry = { grant, weight };
      const onAbort = () => {
        const i = this.#waiting.indexOf(entry);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const after = this.#waiting.findIndex((w) => w.weight < weight);
      if (after < 0) this.#waiting.push(entry);
      else this.#waiting.splice(after, 0, entry);
    });
  }

  get running(): number {
    return this.#running;
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#waiting.shift()?.grant();
    };
  }
}

/** Lists the agent runs at once when nothing else is said. */
export const DEFAULT_CONCURRENT_LISTS = 4;

const gates = new WeakMap<object, ListGate>();

/** The one gate of an agent (keyed by its context object), made on first use. */
export function listGateOf(owner: object, limit = DEFAULT_CONCURRENT_LISTS): ListGate {
  let gate = gates.get(owner);
  if (gate === undefined) gates.set(owner, (gate = new ListGate(limit)));
  return gate;
}
