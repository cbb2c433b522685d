import { protocolError } from './problems.ts';

/**
 * The receiving half of one stream's sequencing. Reliable messages must arrive numbered 1, 2, 3, ...
 * (gRPC keeps order within a stream, so a gap or repeat means a broken peer); the cumulative
 * acknowledgement is the highest of them that has been processed.
 */
export class InboundSequence {
  #received = 0;
  #processed = 0;

  /** Checks the sequence number of an arriving message; 0 marks a message outside the sequence. */
  receive(seq: number): void {
    if (seq === 0) return;
    if (seq !== this.#received + 1) {
      throw protocolError('out_of_order', `expected sequence number ${this.#received + 1}, got ${seq}`);
    }
    this.#received = seq;
  }

  /** Marks a received message as processed; messages are processed in order. */
  processed(seq: number): void {
    if (seq > this.#processed) this.#processed = seq;
  }

  /** The value of `ack_seq` to send. */
  get ackSeq(): number {
    return this.#processed;
  }
}

/**
 * The sending half of one stream's sequencing: numbers reliable messages and hands them back
 * when the peer's cumulative acknowledgement covers them.
 */
export class OutboundSequence<T> {
  #next = 1;
  #acked = 0;
  #pending = new Map<number, T>();

  /** Reserves the next sequence number for `item`, which stays pending until acknowledged. */
  next(item: T): number {
    const seq = this.#next++;
    this.#pending.set(seq, item);
    return seq;
  }

  /** Applies a received `ack_seq`; returns the items it acknowledges, oldest first. */
  acknowledge(ackSeq: number): T[] {
    if (ackSeq < this.#acked) {
      throw protocolError('bad_ack', `acknowledgement went backwards from ${this.#acked} to ${ackSeq}`);
    }
    if (ackSeq >= this.#next) {
      throw protocolError('bad_ack', `acknowledgement ${ackSeq} covers messages never sent (last sent: ${this.#next - 1})`);
    }
    const done: T[] = [];
    for (let seq = this.#acked + 1; seq <= ackSeq; seq++) {
      const item = this.#pending.get(seq);
      if (item !== undefined) done.push(item);
      this.#pending.delete(seq);
    }
    this.#acked = ackSeq;
    return done;
  }

  /** The peer's latest cumulative acknowledgement. */
  get acknowledgedSeq(): number {
    return this.#acked;
  }

  /** The oldest item sent and not yet acknowledged (asked at every send: no copy of the rest). */
  oldest(): T | undefined {
    return this.#pending.values().next().value;
  }

  /** Items sent and not yet acknowledged, oldest first; they carry consecutive sequence numbers. */
  pending(): T[] {
    return [...this.#pending.values()];
  }
}
