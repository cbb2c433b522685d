import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { SequencedEndpoint } from './endpoint.ts';
import { MAX_ACKED_AHEAD } from './sequencing.ts';
import { SerialQueue } from './serial-queue.ts';

type Out = { kind: 'data' | 'note' | 'ack' };

function endpoint() {
  const written: [string, number, number][] = [];
  const ahead: number[][] = [];
  const clock = new ManualClock(100);
  const e = new SequencedEndpoint<Out>({
    write: (out, seq, ack, ackedAhead) => {
      written.push([out.kind, seq, ack]);
      ahead.push(ackedAhead);
    },
    reliable: new Set(['data']),
    ack: { kind: 'ack' },
    clock,
  });
  return { e, written, ahead, clock };
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

describe('SequencedEndpoint, messages processed out of order', () => {
  it('acks a message processed ahead of an earlier one in the next message written, once', async () => {
    const { e, written, ahead } = endpoint();
    for (let seq = 1; seq <= 3; seq++) e.received(seq, 0);
    e.processed(3);
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual([['ack', 0, 0]]);
    expect(ahead).toEqual([[3]]);
    e.send({ kind: 'note' });
    expect(ahead.at(-1)).toEqual([]);
    e.processed(1);
    e.processed(2);
    await new Promise((r) => setImmediate(r));
    expect(written.at(-1)).toEqual(['ack', 0, 3]);
    expect(ahead.at(-1)).toEqual([]);
    expect(e.processedSeq).toBe(3);
  });

  it('settles its own messages the peer acks ahead', async () => {
    const { e } = endpoint();
    const first = e.send({ kind: 'data' });
    const second = e.send({ kind: 'data' });
    let firstSettled = false;
    first.acked.then(() => (firstSettled = true), () => undefined);
    e.received(0, 0, [2]);
    await second.acked;
    expect(firstSettled).toBe(false);
    expect(e.oldestUnackedAt()).toBe(100);
    e.close((seq) => new Error(`lost ${seq}`));
    await expect(first.acked).rejects.toThrow('lost 1');
  });

  it('sends more acks ahead than one message lists in the messages that follow', async () => {
    const { e, written, ahead } = endpoint();
    const count = MAX_ACKED_AHEAD * 2 + 1;
    for (let seq = 1; seq <= count + 1; seq++) e.received(seq, 0);
    for (let seq = 2; seq <= count + 1; seq++) e.processed(seq);
    await vi.waitFor(() => expect(ahead.flat()).toHaveLength(count));
    expect(written.every(([kind]) => kind === 'ack')).toBe(true);
    expect(ahead.map((a) => a.length)).toEqual([MAX_ACKED_AHEAD, MAX_ACKED_AHEAD, 1]);
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
