import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VendorError } from '../errors.ts';
import { InboundSequence, MAX_ACKED_AHEAD, OutboundSequence } from './sequencing.ts';

function problemOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e instanceof VendorError ? e.details['problem'] : e;
  }
  return undefined;
}

describe('InboundSequence', () => {
  it('accepts 1, 2, 3 with unsequenced messages between, and acks what was processed', () => {
    const inbound = new InboundSequence();
    inbound.receive(1);
    inbound.receive(0);
    inbound.receive(2);
    expect(inbound.ackSeq).toBe(0);
    inbound.processed(1);
    expect(inbound.ackSeq).toBe(1);
    inbound.processed(2);
    inbound.receive(3);
    expect(inbound.ackSeq).toBe(2);
  });

  it('acknowledges a message processed before an earlier one ahead, once, until the cumulative ack covers it', () => {
    const inbound = new InboundSequence();
    for (let seq = 1; seq <= 5; seq++) inbound.receive(seq);
    inbound.processed(2);
    inbound.processed(4);
    expect(inbound.ackSeq).toBe(0);
    expect(inbound.hasUnlisted).toBe(true);
    expect(inbound.takeAhead()).toEqual([2, 4]);
    expect(inbound.hasUnlisted).toBe(false);
    expect(inbound.takeAhead()).toEqual([]);
    inbound.processed(4);
    expect(inbound.takeAhead()).toEqual([]);
    inbound.processed(1);
    expect(inbound.ackSeq).toBe(2);
    inbound.processed(5);
    inbound.processed(3);
    // 5 was never listed, and the cumulative acknowledgement now covers it.
    expect(inbound.ackSeq).toBe(5);
    expect(inbound.hasUnlisted).toBe(false);
    expect(inbound.takeAhead()).toEqual([]);
  });

  it(`lists at most ${MAX_ACKED_AHEAD} ahead per message, the rest in the next`, () => {
    const inbound = new InboundSequence();
    const count = MAX_ACKED_AHEAD + 10;
    for (let seq = 1; seq <= count + 1; seq++) inbound.receive(seq);
    for (let seq = 2; seq <= count + 1; seq++) inbound.processed(seq);
    const first = inbound.takeAhead();
    expect(first).toHaveLength(MAX_ACKED_AHEAD);
    expect(inbound.hasUnlisted).toBe(true);
    expect(inbound.takeAhead()).toEqual(Array.from({ length: 10 }, (_, i) => MAX_ACKED_AHEAD + 2 + i));
  });

  it('refuses a gap, a repeat and a start other than 1 as out of order', () => {
    expect(problemOf(() => new InboundSequence().receive(2))).toBe('out_of_order');
    const inbound = new InboundSequence();
    inbound.receive(1);
    expect(problemOf(() => inbound.receive(1))).toBe('out_of_order');
    expect(problemOf(() => inbound.receive(3))).toBe('out_of_order');
    inbound.receive(2);
  });
});

describe('OutboundSequence', () => {
  it('numbers from 1 and releases items as cumulative acks cover them', () => {
    const out = new OutboundSequence<string>();
    expect([out.next('a'), out.next('b'), out.next('c')]).toEqual([1, 2, 3]);
    expect(out.acknowledge(0)).toEqual([]);
    expect(out.acknowledge(2)).toEqual(['a', 'b']);
    expect(out.acknowledge(2)).toEqual([]);
    expect(out.pending()).toEqual([[3, 'c']]);
    expect(out.acknowledge(3)).toEqual(['c']);
    expect(out.pending()).toEqual([]);
  });

  it('refuses acks of messages never sent and acks that go backwards', () => {
    const out = new OutboundSequence<string>();
    expect(problemOf(() => out.acknowledge(1))).toBe('bad_ack');
    out.next('a');
    out.next('b');
    out.acknowledge(2);
    expect(problemOf(() => out.acknowledge(1))).toBe('bad_ack');
  });

  it('releases items acknowledged ahead of the cumulative ack, and refuses ahead acks outside what is pending', () => {
    const out = new OutboundSequence<string>();
    for (const item of ['a', 'b', 'c', 'd']) out.next(item);
    expect(out.acknowledge(0, [2, 4])).toEqual(['b', 'd']);
    expect(out.oldest()).toBe('a');
    expect(out.pending()).toEqual([[1, 'a'], [3, 'c']]);
    // Listed again: passed over.
    expect(out.acknowledge(0, [2])).toEqual([]);
    expect(out.acknowledge(3)).toEqual(['a', 'c']);
    expect(out.pending()).toEqual([]);
    expect(problemOf(() => out.acknowledge(3, [3]))).toBe('bad_ack');
    expect(problemOf(() => out.acknowledge(3, [5]))).toBe('bad_ack');
    out.next('e');
    expect(out.acknowledge(3, [5])).toEqual(['e']);
  });

  it('hands back every item exactly once whatever order the peer processes them in', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }).chain((count) => fc.tuple(fc.constant(count), fc.shuffledSubarray([...Array(count).keys()], { minLength: count }), fc.array(fc.nat({ max: 5 }), { maxLength: 30 }))), ([count, order, writes]) => {
        const out = new OutboundSequence<number>();
        const inbound = new InboundSequence();
        for (let i = 0; i < count; i++) inbound.receive(out.next(i));
        const seen: number[] = [];
        // The peer processes in `order` and writes a message (its acks) after every few.
        let done = 0;
        for (const step of [...writes, count]) {
          for (const i of order.slice(done, done + step)) inbound.processed(i + 1);
          done = Math.min(count, done + step);
          seen.push(...out.acknowledge(inbound.ackSeq, inbound.takeAhead()));
        }
        while (inbound.hasUnlisted) seen.push(...out.acknowledge(inbound.ackSeq, inbound.takeAhead()));
        expect(inbound.ackSeq).toBe(count);
        expect([...seen].sort((x, y) => x - y)).toEqual([...Array(count).keys()]);
        expect(out.pending()).toEqual([]);
      }),
    );
  });

  it('hands back every item exactly once for any sequence of valid acks', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(fc.nat(), { maxLength: 20 }), (count, steps) => {
        const out = new OutboundSequence<number>();
        for (let i = 0; i < count; i++) out.next(i);
        const seen: number[] = [];
        let acked = 0;
        for (const step of steps) {
          acked = Math.min(count, acked + step);
          seen.push(...out.acknowledge(acked));
        }
        seen.push(...out.acknowledge(count));
        expect(seen).toEqual([...Array(count).keys()]);
      }),
    );
  });
});
