import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { Waker } from './waker.ts';

describe('Waker', () => {
  it('returns when woken, when the time passes, or when aborted, leaving no sleeper', async () => {
    const clock = new ManualClock();
    const waker = new Waker();
    const stop = new AbortController();

    const byWake = waker.wait(clock, 1000, stop.signal);
    waker.wake();
    await byWake;
    expect(clock.pendingSleeps).toBe(0);

    const byTime = waker.wait(clock, 1000, stop.signal);
    await clock.advance(1000);
    await byTime;

    const forever = waker.wait(clock, Infinity, stop.signal);
    expect(clock.pendingSleeps).toBe(0);
    stop.abort();
    await forever;
    await waker.wait(clock, 10, stop.signal);
  });
});
