import { describe, expect, it } from 'vitest';
import { ManualClock } from './manual-clock.ts';

describe('ManualClock', () => {
  it('wakes sleepers only when time passes their deadline', async () => {
    const clock = new ManualClock(1000);
    const woke: number[] = [];
    void clock.sleep(50).then(() => woke.push(50));
    void clock.sleep(10).then(() => woke.push(10));
    await clock.advance(9);
    expect(woke).toEqual([]);
    await clock.advance(1);
    expect(woke).toEqual([10]);
    await clock.advance(100);
    expect(woke).toEqual([10, 50]);
    expect(clock.now()).toBe(1110);
  });

  it('rejects a sleep whose signal aborts', async () => {
    const clock = new ManualClock();
    const ctl = new AbortController();
    const p = clock.sleep(100, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pendingSleeps).toBe(0);
  });
});
