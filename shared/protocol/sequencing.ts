import { protocolError } from './problems.ts';

/** Most sequence numbers one message lists as processed ahead (`acked_ahead`, docs/protocol.md section 3). */
export const MAX_ACKED_AHEAD = 256;

/**
 * The receiving half of one stream's sequencing. Reliable messages must arrive numbered 1, 2, 3, ...
 * (gRPC keeps order within a stream, so a gap or repeat means a broken peer); the cumulative
 * acknowledgement is the highest of them up to which every one has been processed. A message
 * processed before an earlier one is acknowledged ahead: listed once, in the next message written.
 */
export class InboundSequence {
  #received = 0;
  #processed = 0;
  /** Processed, above the cumulative acknowledgement. */
  readonly #ahead = new Set<number>();
  /** Of those, not yet listed in a message written. */
  #unlisted: number[] = [];

  /** Checks the sequence number of an arriving message; 0 marks a message outside the sequence. */
  receive(seq: number): void {
    if (seq === 0) return;
    if (seq !== this.#received + 1) {
      throw protocolError('out_of_order', `expected sequence number ${this.#received + 1}, got ${seq}`);
    }
    this.#received = seq;
  }

  /** Marks a received message as processed, in any order. */
  processed(seq: number): void {
    if (seq <= this.#processed || this.#ahead.has(seq)) return;
    if (seq !== this.#processed + 1) {
      this.#ahead.add(seq);
      this.#unlisted.push(seq);
      return;
    }
    this.#processed = seq;
    while (this.#ahead.delete(this.#processed + 1)) this.#processed++;
  }

  /** The value of `ack_seq` to send. */
  get ackSeq(): number {
    return this.#processed;
  }

  /** Whether messages processed ahead wait to be listed. */
  get hasUnlisted(): boolean {
    return this.#unlisted.some((seq) => seq > this.#processed);
  }

  /**
   * The value of `acked_ahead` for the next message written: up to `MAX_ACKED_AHEAD` processed ahead and
   * not listed yet, still above the cumulative acknowledgement (which covers the rest).
   */
  takeAhead(): number[] {
    // Asked at every message written; nearly always there is nothing.
    if (this.#unlisted.length === 0) return [];
    const above = this.#unlisted.filter((seq) => seq > this.#processed);
    this.#unlisted = above.slice(MAX_ACKED_AHEAD);
    return above.slice(0, MAX_ACKED_AHEAD);
  }
}

/**
 * The sending half of one stream's sequencing: numbers reliable messages and hands them back
 * when the peer's cumulative acknowledgement covers them or the peer lists them ahead.
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

  /**
   * Applies a received `ack_seq` and `acked_ahead`; returns the items they acknowledge: those the
   * cumulative part covers, oldest first, then those listed ahead. A message listed ahead that is no
   * longer pending (listed again, or covered since) is passed over.
   */
  acknowledge(ackSeq: number, ahead: readonly number[] = []): T[] {
    if (ackSeq < this.#acked) {
      throw protocolError('bad_ack', `acknowledgement went backwards from ${this.#acked} to ${ackSeq}`);
    }
    if (ackSeq >= this.#next) {
      throw protocolError('bad_ack', `acknowledgement ${ackSeq} covers messages never sent (last sent: ${this.#next - 1})`);
    }
    for (const seq of ahead) {
      if (seq <= ackSeq || seq >= this.#next) {
        throw protocolError('bad_ack', `acknowledgement ahead of ${seq} is not between ${ackSeq} (acknowledged) and ${this.#next} (next to send)`);
      }
    }
    const done: T[] = [];
    // Pending items are in order of their numbers (a Map keeps insertion order), so the cumulative
    // part walks the front of the map, not every number up to `ackSeq`: the ones acknowledged ahead
    // are gone from it.
    for (const [seq, item] of this.#pending) {
      if (seq > ackSeq) break;
      done.push(item);
      this.#pending.delete(seq);
    }
    this.#acked = ackSeq;
    for (const seq of ahead) {
      const item = this.#pending.get(seq);
      if (item === undefined) continue;
      done.push(item);
      this.#pending.delete(seq);
    }
    return done;
  }

  /** The oldest item sent and not yet acknowledged (asked at every send: no copy of the rest). */
  oldest(): T | undefined {
    return this.#pending.values().next().value;
  }

  /** Items sent and not yet acknowledged, with their sequence numbers, oldest first. */
  pending(): [seq: number, item: T][] {
    return [...this.#pending.entries()];
  }
}
