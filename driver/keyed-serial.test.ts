import { describe, expect, it } from 'vitest';
import { KeyedSerial } from './keyed-serial.ts';

/** A task that records its start and finishes when told. */
function task(log: string[], name: string) {
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  return {
    run: async () => {
      log.push(`start ${name}`);
      await finished;
      log.push(`end ${name}`);
    },
    finish,
  };
}

const turn = () => new Promise((r) => setImmediate(r));

/** An admission under way: whether it got in yet, and its task's completion once it did. */
function watched(admission: Promise<{ done: Promise<void> }>): { admitted: () => boolean; done: Promise<void> } {
  let admitted = false;
  const done = admission.then((r) => {
    admitted = true;
    return r.done;
  });
  return { admitted: () => admitted, done };
}

describe('KeyedSerial', () => {
  it('runs one key\'s tasks in order and other keys\' at the same time, within the running bound', async () => {
    const serial = new KeyedSerial({ running: 2, perSource: 10 });
    const log: string[] = [];
    const source = {};
    const a1 = task(log, 'a1');
    const a2 = task(log, 'a2');
    const b1 = task(log, 'b1');
    const c1 = task(log, 'c1');
    const done = await Promise.all([serial.admit(source, 'a', a1.run), serial.admit(source, 'a', a2.run), serial.admit(source, 'b', b1.run), serial.admit(source, 'c', c1.run)]);
    await turn();
    expect(log).toEqual(['start a1', 'start b1']);
    b1.finish();
    await done[2]!.done;
    await turn();
    // c1 takes b1's slot; a2 still waits for a1.
    expect(log).toEqual(['start a1', 'start b1', 'end b1', 'start c1']);
    a1.finish();
    c1.finish();
    await done[0]!.done;
    await done[3]!.done;
    await turn();
    expect(log.slice(-1)).toEqual(['start a2']);
    a2.finish();
    await done[1]!.done;
    await turn();
    expect(serial.size).toBe(0);
  });

  it('makes a source wait for room once it has its bound of tasks waiting or running', async () => {
    const serial = new KeyedSerial({ running: 4, perSource: 2 });
    const log: string[] = [];
    const busy = {};
    const other = {};
    const t1 = task(log, '1');
    const t2 = task(log, '2');
    await serial.admit(busy, 'a', t1.run);
    await serial.admit(busy, 'b', t2.run);
    const next = watched(serial.admit(busy, 'c', async () => undefined));
    // Another source is not held by the busy one.
    await (await serial.admit(other, 'd', async () => undefined)).done;
    await turn();
    expect(next.admitted()).toBe(false);
    t1.finish();
    await next.done;
    expect(next.admitted()).toBe(true);
    t2.finish();
  });

  it('settles a task\'s completion with its failure, and goes on with the key', async () => {
    const serial = new KeyedSerial({ running: 1, perSource: 4 });
    const failed = await serial.admit({}, 'a', async () => Promise.reject(new Error('no')));
    const next = await serial.admit({}, 'a', async () => undefined);
    await expect(failed.done).rejects.toThrow('no');
    await expect(next.done).resolves.toBeUndefined();
  });
  it('holds a source at its bound of one key while its other keys still get in', async () => {
    const serial = new KeyedSerial({ running: 1, perSource: 10, perKey: 2 });
    const log: string[] = [];
    const source = {};
    const a1 = task(log, 'a1');
    await serial.admit(source, 'a', a1.run);
    await serial.admit(source, 'a', async () => undefined);
    const next = watched(serial.admit(source, 'a', async () => undefined));
    // Another key of the same source is not held by the full one.
    await serial.admit(source, 'b', async () => undefined);
    await turn();
    expect(next.admitted()).toBe(false);
    a1.finish();
    await next.done;
    expect(next.admitted()).toBe(true);
  });

  it('grants a source more room past its bound only as `morePerSource` says, asking only then', async () => {
    let grant = 0;
    let asked = 0;
    const serial = new KeyedSerial<{ name: string }>({
      running: 1,
      perSource: 2,
      morePerSource: () => {
        asked++;
        return grant;
      },
    });
    const log: string[] = [];
    const source = { name: 's' };
    const t1 = task(log, '1');
    await serial.admit(source, 'a', t1.run);
    await serial.admit(source, 'b', async () => undefined);
    expect(asked).toBe(0);
    const next = watched(serial.admit(source, 'c', async () => undefined));
    await turn();
    expect(next.admitted()).toBe(false);
    expect(asked).toBeGreaterThan(0);
    // The grant grows (the agent came to hold more): the next check lets it in.
    grant = 1;
    t1.finish();
    await next.done;
    expect(next.admitted()).toBe(true);
  });

  it('bounds the bytes of a source\'s tasks, and lets one task bigger than the bound in alone', async () => {
    const serial = new KeyedSerial({ running: 4, perSource: 10, perSourceBytes: 100 });
    const log: string[] = [];
    const source = {};
    const big = task(log, 'big');
    // Alone, a task past the bound still gets in: otherwise it never would.
    await serial.admit(source, 'a', big.run, 150);
    const next = watched(serial.admit(source, 'b', async () => undefined, 1));
    await turn();
    expect(next.admitted()).toBe(false);
    big.finish();
    await next.done;
    expect(next.admitted()).toBe(true);
    const t1 = task(log, 't1');
    await serial.admit(source, 'a', t1.run, 60);
    await (await serial.admit(source, 'b', async () => undefined, 40)).done;
    const third = watched(serial.admit(source, 'c', async () => undefined, 41));
    await turn();
    expect(third.admitted()).toBe(false);
    t1.finish();
    await third.done;
    expect(third.admitted()).toBe(true);
  });

  it('gives a running place up while a task idles, and takes one back before tasks not yet started', async () => {
    const serial = new KeyedSerial({ running: 1, perSource: 10 });
    const log: string[] = [];
    const source = {};
    let wake!: () => void;
    const waiting = new Promise<void>((r) => (wake = r));
    let back!: () => void;
    const resumed = new Promise<void>((r) => (back = r));
    const a = await serial.admit(source, 'a', async (slot) => {
      log.push('a idles');
      await slot.idle(waiting);
      log.push('a back');
      await resumed;
      log.push('a ends');
    });
    await turn();
    expect(serial.running).toBe(0);
    const b = task(log, 'b');
    const c = task(log, 'c');
    const bDone = await serial.admit(source, 'b', b.run);
    const cDone = await serial.admit(source, 'c', c.run);
    await turn();
    // b has a's place; c waits for one.
    expect(log).toEqual(['a idles', 'start b']);
    wake();
    await turn();
    // a is back from idling but no place is free yet.
    expect(log).toEqual(['a idles', 'start b']);
    b.finish();
    await bDone.done;
    await turn();
    // The place b left goes to a, back from idling, before c.
    expect(log).toEqual(['a idles', 'start b', 'end b', 'a back']);
    back();
    await a.done;
    await turn();
    expect(log.at(-1)).toBe('start c');
    c.finish();
    await cDone.done;
    await turn();
    expect(serial.running).toBe(0);
    expect(serial.size).toBe(0);
  });

  it('keeps a key\'s order while its running task idles', async () => {
    const serial = new KeyedSerial({ running: 2, perSource: 10 });
    const log: string[] = [];
    let wake!: () => void;
    const waiting = new Promise<void>((r) => (wake = r));
    const first = await serial.admit({}, 'a', async (slot) => {
      await slot.idle(waiting);
      log.push('a1');
    });
    const second = await serial.admit({}, 'a', async () => {
      log.push('a2');
    });
    await turn();
    expect(log).toEqual([]);
    wake();
    await first.done;
    await second.done;
    expect(log).toEqual(['a1', 'a2']);
  });
  it('tells of each task that waits for room the bound it met first', async () => {
    const bounds: string[] = [];
    const serial = new KeyedSerial({ running: 1, perSource: 3, perKey: 1, perSourceBytes: 10, onWait: (b) => bounds.push(b) });
    const log: string[] = [];
    const source = {};
    const head = task(log, 'head');
    await serial.admit(source, 'a', head.run, 5);
    const waiting = [serial.admit(source, 'a', async () => undefined), serial.admit(source, 'b', async () => undefined, 6)];
    await turn();
    expect(bounds).toEqual(['key', 'bytes']);
    head.finish();
    for (const w of await Promise.all(waiting)) await w.done;
    expect(bounds).toEqual(['key', 'bytes']);
  });
});
