/**
 * The retry rule of `kubernetes.retries.*` (docs/agent-config.md#kubernetes-wide-settings): `maxRetries` tries of the same request with
 * `backOffMs` between them; any error is retried when `retryAnyError` is true, otherwise only an error
 * whose message contains an item of `retryableErrors` (compared without regard to case, so the
 * default `timeout` also matches the server's `Timeout: request did not complete ...`).
 */
import type { Clock } from '../../shared/clock.ts';
import type { RetrySettings } from './types.ts';

export function triesAllowed(settings: RetrySettings): number {
  return settings.enabled ? Math.max(1, settings.maxRetries) : 1;
}

export function isRetryable(error: unknown, settings: RetrySettings): boolean {
  if (!settings.enabled) return false;
  if (settings.retryAnyError) return true;
  const message = (error instanceof Error ? error.message : String(error)).toLowerCase();
  return settings.retryableErrors.some((needle) => message.includes(needle.toLowerCase()));
}

export interface RetryHooks {
  clock: Clock;
  signal?: AbortSignal | undefined;
  /** Told before each wait, with the try that failed (1-based). */
  onRetry?(error: unknown, failedTry: number): void;
}

/** Runs `attempt` until it succeeds, the error is not retryable, or the tries are used up. */
export async function withRetries<T>(settings: RetrySettings, hooks: RetryHooks, attempt: () => Promise<T>): Promise<T> {
  const tries = triesAllowed(settings);
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= tries || hooks.signal?.aborted || !isRetryable(error, settings)) throw error;
      hooks.onRetry?.(error, n);
      await hooks.clock.sleep(settings.backOffMs, hooks.signal);
    }
  }
}
