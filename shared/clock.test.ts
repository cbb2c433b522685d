import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from './clock.ts';

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

describe('systemClock', () => {
  it('a sleep aborted rejects with the reason of its signal, also when aborted before it began', async () => {
    const ctl = new AbortController();
    const p = systemClock.sleep(60_000, ctl.signal);
    const reason = new Error('done');
    ctl.abort(reason);
    await expect(p).rejects.toBe(reason);
    await expect(systemClock.sleep(60_000, ctl.signal)).rejects.toBe(reason);
  });

  it('a sleep resolves after its time and leaves no listener on the signal', async () => {
    const ctl = new AbortController();
    let listeners = 0;
    const add = ctl.signal.addEventListener.bind(ctl.signal);
    const remove = ctl.signal.removeEventListener.bind(ctl.signal);
    ctl.signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
    ctl.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (listeners--, remove(...a))) as typeof remove;
    await systemClock.sleep(5, ctl.signal);
    expect(listeners).toBe(0);
  });
});
