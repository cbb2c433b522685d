import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { SequencedEndpoint } from './endpoint.ts';
import { SerialQueue } from './serial-queue.ts';

type Out = { kind: 'data' | 'note' | 'ack' };

function endpoint() {
  const written: [string, number, number][] = [];
  const clock = new ManualClock(100);
  const e = new SequencedEndpoint<Out>({
    write: (out, seq, ack) => written.push([out.kind, seq, ack]),
    reliable: new Set(['data']),
    ack: { kind: 'ack' },
    clock,
  });
  return { e, written, clock };
}

describe('SequencedEndpoint', () => {
  it('numbers reliable messages only and settles them on the peer ack', async () => {
    const { e, written, clock } = endpoint();
    const first = e.send({ kind: 'data' });
    clock.now();
    await clock.advance(5);
    e.send({ kind: 'note' });
    const second = e.send({ kind: 'data' });
    expect(written).toEqual([['data', 1, 0], ['note', 0, 0], ['data', 2, 0]]);
    expect(e.oldestUnackedAt()).toBe(100);
    e.received(0, 1);
    await first.acked;
    expect(e.oldestUnackedAt()).toBe(105);
    e.close((seq) => new Error(`lost ${seq}`));
    await expect(second.acked).rejects.toThrow('lost 2');
  });

  it('acks processed messages once per turn, or on the next message written', async () => {
    const { e, written } = endpoint();
    e.received(1, 0);
    e.received(2, 0);
    e.processed(1);
    e.processed(2);
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual([['ack', 0, 2]]);
    e.received(3, 0);
    e.processed(3);
    e.send({ kind: 'note' });
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual([['ack', 0, 2], ['note', 0, 3]]);
  });
});

describe('SerialQueue', () => {
  it('runs tasks in order, one at a time, and pauses the stream past the high-water mark', async () => {
    const flow: string[] = [];
    const errors: unknown[] = [];
    const q = new SerialQueue({
      onError: (e) => errors.push(e),
      flow: { pause: () => flow.push('pause'), resume: () => flow.push('resume') },
      highWater: 3,
      lowWater: 1,
    });
    const order: number[] = [];
    let release: () => void = () => undefined;
    q.push(() => new Promise<void>((r) => (release = r)).then(() => void order.push(1)));
    q.push(() => void order.push(2));
    q.push(() => {
      throw new Error('bad');
    });
    expect(flow).toEqual(['pause']);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual([1, 2]);
    expect(flow).toEqual(['pause', 'resume']);
    expect(errors).toHaveLength(1);
  });
});
