/**
 * Time as every component sees it. Leases, backoff and expiry read `now()` and wait with
 * `sleep()`, so tests drive them with a manual clock (test/support/manual-clock.ts) instead of
 * waiting for real.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  // Not `timers/promises`: its abort makes a new AbortError (with a stack trace) each time, and loops
  // that wait until woken (one wake per message sent) abort a sleep per message.
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
