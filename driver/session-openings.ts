/**
 * How one replica records the sessions of agents saying hello (docs/reliability.md, "The driver
 * under store faults"). A burst of hellos (a driver restart, a fleet reconnecting) would otherwise send every
 * hello's table calls at once: the table client's requests queue for its sockets, time out while
 * queued, and each hello that gives up is sent again by its agent, so the burst feeds itself. Here
 * a bounded number of hellos are recorded at a time, in arrival order, and a step the table did not
 * answer is tried again within the hello, a few times with growing waits, before it is refused.
 */
import type { Clock } from '../shared/clock.ts';
import { VendorError } from '../shared/errors.ts';
import { storeBackoff, isStoreOutage } from './backoff.ts';

/** Hellos one replica records at once: each makes its table calls one after another. */
export const CONCURRENT_OPENINGS = 16;
/** Tries of one step of recording a hello while the table does not answer, before the hello is refused. */
export const OPENING_STEP_TRIES = 4;
/** The first wait between two tries of a step, doubling, each between half and the whole. */
export const OPENING_RETRY_BASE_MS = 100;
const OPENING_RETRY_MAX_MS = 1_000;

/** Runs at most `limit` tasks at a time, the others waiting in the order they came. */
export class OpeningLine {
  readonly #limit: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /** Tasks running now, and waiting for a place. */
  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `task` once a place is free, telling it whether it waited for one; a task whose `signal`
   * aborted while it waited is not run.
   */
  async run<T>(task: (waited: boolean) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const waited = this.#running >= this.#limit;
    if (waited) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      // A hello whose stream ended while it waited (its lease ran out, the agent left) costs the table nothing.
      if (signal?.aborted === true) throw new VendorError('unavailable', 'the agent stream ended before its hello was recorded');
      return await task(waited);
    } finally {
      const next = this.#waiting.shift();
      // The place passes straight to the next task: `running` stays as it is.
      if (next !== undefined) next();
      else this.#running--;
    }
  }
}

/**
 * Runs one idempotent step of recording a hello, again while the table does not answer, at most
 * `tries` times; the last failure is thrown. Any other failure is thrown at once.
 */
export async function retryOpeningStep<T>(clock: Clock, step: () => Promise<T>, tries = OPENING_STEP_TRIES): Promise<T> {
  const backoff = storeBackoff(OPENING_RETRY_BASE_MS, OPENING_RETRY_MAX_MS);
  for (;;) {
    try {
      return await step();
    } catch (e) {
      if (!isStoreOutage(e) || backoff.failures + 1 >= tries) throw e;
      await clock.sleep(backoff.failed());
    }
  }
}
