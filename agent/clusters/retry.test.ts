import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { isRetryable, triesAllowed, withRetries } from './retry.ts';
import { DEFAULT_RETRY_SETTINGS, type RetrySettings } from './types.ts';

describe('the kubernetes.retries rule', () => {
  it('by default retries errors containing timeout or deadline exceeded, in any case', () => {
    expect(isRetryable(new Error('GET /api: 504 Timeout: request did not complete'), DEFAULT_RETRY_SETTINGS)).toBe(true);
    expect(isRetryable(new Error('context deadline exceeded'), DEFAULT_RETRY_SETTINGS)).toBe(true);
    expect(isRetryable(new Error('500 Internal error occurred'), DEFAULT_RETRY_SETTINGS)).toBe(false);
    expect(isRetryable(new Error('500 Internal error occurred'), { ...DEFAULT_RETRY_SETTINGS, retryAnyError: true })).toBe(true);
    expect(isRetryable(new Error('timeout'), { ...DEFAULT_RETRY_SETTINGS, enabled: false })).toBe(false);
  });

  it('maxRetries counts tries in all; disabled or 0 means one try', () => {
    expect(triesAllowed(DEFAULT_RETRY_SETTINGS)).toBe(3);
    expect(triesAllowed({ ...DEFAULT_RETRY_SETTINGS, maxRetries: 0 })).toBe(1);
    expect(triesAllowed({ ...DEFAULT_RETRY_SETTINGS, enabled: false })).toBe(1);
  });

  it('waits backOffMs between tries on the injected clock', async () => {
    const clock = new ManualClock();
    const settings: RetrySettings = { ...DEFAULT_RETRY_SETTINGS, backOffMs: 3000 };
    const at: number[] = [];
    const result = withRetries(settings, { clock }, async () => {
      at.push(clock.now());
      if (at.length < 3) throw new Error('i/o timeout');
      return 'ok';
    });
    await clock.advance(0);
    await clock.advance(3000);
    await clock.advance(3000);
    await expect(result).resolves.toBe('ok');
    expect(at).toEqual([0, 3000, 6000]);
  });
});
