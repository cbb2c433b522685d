import { describe, expect, it } from 'vitest';
import { systemClock } from './clock.ts';

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
