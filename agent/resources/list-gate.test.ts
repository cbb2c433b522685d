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

  it('serves among equals the lists of the account that asked first, then the next account\'s', async () => {
    const gate = new ListGate(1);
    const first = await gate.acquire(undefined, 0, 'a');
    const order: string[] = [];
    const wait = (name: string, group: string, weight = 0) =>
      gate.acquire(undefined, weight, group).then((release) => {
        order.push(name);
        release();
      });
    // The accounts' scopes ask interleaved, as their discoveries answer.
    const all = [wait('a-2', 'a'), wait('b-1', 'b'), wait('c-1', 'c'), wait('b-2', 'b'), wait('a-3', 'a'), wait('c-2', 'c'), wait('c-relist', 'c', 300)];
    await settle();
    first();
    await Promise.all(all);
    expect(order).toEqual(['c-relist', 'a-2', 'a-3', 'b-1', 'b-2', 'c-1', 'c-2']);
    // An account whose lists are all done asks again as a newcomer, after the others waiting.
    const held = await gate.acquire(undefined, 0, 'b');
    const again = [wait('a-later', 'a'), wait('b-later', 'b')];
    await settle();
    held();
    await Promise.all(again);
    expect(order.slice(-2)).toEqual(['b-later', 'a-later']);
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
