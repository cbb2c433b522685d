import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VendorError } from '../errors.ts';
import { InboundSequence, OutboundSequence } from './sequencing.ts';

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
    expect(out.pending()).toEqual(['c']);
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
