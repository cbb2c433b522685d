import { describe, expect, it } from 'vitest';
import { ListGate } from './list-gate.ts';

const settle = () => new Promise((r) => setImmediate(r));

describe('ListGate', () => {
  it('runs at most `limit` lists at once', async () => {
    const gate = new ListGate(2);
    const a = await gate.acquire();
    const b = await gate.acquire();
    let third = false;
    const c = gate.acquire().then((release) => {
      third = true;
      return release;
    });
    await settle();
    expect(gate.running).toBe(2);
    expect(third).toBe(false);
    a();
    a(); // a second release of the same slot changes nothing
    expect((await c, third)).toBe(true);
    expect(gate.running).toBe(2);
    b();
    (await c)();
    expect(gate.running).toBe(0);
  });

  it('serves waiters largest first, in arrival order among equals', async () => {
    const gate = new ListGate(1);
    const first = await gate.acquire(undefined, 5);
    const order: string[] = [];
    const wait = (name: string, weight?: number) =>
      gate.acquire(undefined, weight).then((release) => {
        order.push(name);
        release();
      });
    const all = [wait('unknown-1'), wait('small', 10), wait('large', 20_000), wait('unknown-2', 0), wait('medium', 7_500), wait('large-2', 20_000)];
    await settle();
    first();
    await Promise.all(all);
    expect(order).toEqual(['large', 'large-2', 'medium', 'small', 'unknown-1', 'unknown-2']);
  });

  it('drops a waiter whose signal aborts, and serves the next', async () => {
    const gate = new ListGate(1);
    const held = await gate.acquire();
    const abort = new AbortController();
    const dropped = gate.acquire(abort.signal, 100);
    const next = gate.acquire(undefined, 1);
    abort.abort(new Error('scope stopped'));
    await expect(dropped).rejects.toThrow('scope stopped');
    held();
    (await next)();
    expect(gate.running).toBe(0);
    await expect(gate.acquire(abort.signal)).rejects.toThrow('scope stopped');
  });
});
