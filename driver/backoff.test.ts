import { describe, expect, it } from 'vitest';
import { isStoreOutage, storeBackoff } from './backoff.ts';
import { VendorError } from '../shared/errors.ts';

describe('storeBackoff', () => {
  it('doubles from the base to the cap, each wait between half and the whole, and starts over after a success', () => {
    const high = storeBackoff(100, 1_000, () => 0.999_999);
    expect([1, 2, 3, 4, 5, 6].map(() => Math.round(high.failed()))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(high.failures).toBe(6);
    high.succeeded();
    expect(high.failures).toBe(0);
    expect(Math.round(high.failed())).toBe(100);
    const low = storeBackoff(100, 1_000, () => 0);
    expect([1, 2, 3, 4, 5].map(() => low.failed())).toEqual([50, 100, 200, 400, 500]);
  });

  it('waits at least 1 ms, and never caps below its base', () => {
    const zero = storeBackoff(0, 0, () => 0);
    expect([1, 2, 3].map(() => zero.failed())).toEqual([0.5, 0.5, 0.5]);
    const capBelowBase = storeBackoff(400, 100, () => 0);
    expect([1, 2].map(() => capBelowBase.failed())).toEqual([200, 200]);
  });

  it('tells a table that does not answer from other failures', () => {
    const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
    expect(isStoreOutage(throttled)).toBe(true);
    expect(isStoreOutage(Object.assign(new Error('timed out'), { name: 'TimeoutError' }))).toBe(true);
    expect(isStoreOutage(new VendorError('unavailable', 'the table is not answering', { cause: throttled }))).toBe(true);
    expect(isStoreOutage(new VendorError('unavailable', 'the agent stream has ended'))).toBe(false);
    expect(isStoreOutage(Object.assign(new Error('bad'), { name: 'ValidationException' }))).toBe(false);
  });
});
