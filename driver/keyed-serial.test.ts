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
    let third = false;
    const admitted = serial.admit(busy, 'c', async () => undefined).then((r) => ((third = true), r));
    // Another source is not held by the busy one.
    await (await serial.admit(other, 'd', async () => undefined)).done;
    await turn();
    expect(third).toBe(false);
    t1.finish();
    await (await admitted).done;
    expect(third).toBe(true);
    t2.finish();
  });

  it('settles a task\'s completion with its failure, and goes on with the key', async () => {
    const serial = new KeyedSerial({ running: 1, perSource: 4 });
    const failed = await serial.admit({}, 'a', async () => Promise.reject(new Error('no')));
    const next = await serial.admit({}, 'a', async () => undefined);
    await expect(failed.done).rejects.toThrow('no');
    await expect(next.done).resolves.toBeUndefined();
  });
});
