import type { Clock } from '../clock.ts';
import { InboundSequence, OutboundSequence } from './sequencing.ts';

interface Pending {
  sentAt: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The sequencing and acknowledgement work both ends of a stream share. Reliable messages get the
 * next sequence number and a promise that settles when the peer acknowledges them (or the stream
 * ends first); every message written carries the cumulative ack of what this end has processed and
 * the messages it processed ahead of an earlier one (each listed once), and when nothing else goes
 * out an explicit ack follows within the same turn of the event loop.
 */
export class SequencedEndpoint<Out extends { kind: string }> {
  readonly #inbound = new InboundSequence();
  readonly #outbound = new OutboundSequence<Pending>();
  readonly #write: (out: Out, seq: number, ackSeq: number, ackedAhead: number[]) => void;
  readonly #reliable: ReadonlySet<string>;
  readonly #ack: Out;
  readonly #clock: Clock;
  #ackSent = 0;
  #ackScheduled = false;
  #closed = false;

  constructor(options: {
    /** `ackedAhead` is empty unless `processed` was told of messages out of order. */
    write: (out: Out, seq: number, ackSeq: number, ackedAhead: number[]) => void;
    reliable: ReadonlySet<string>;
    /** The message that carries nothing but an ack. */
    ack: Out;
    clock: Clock;
  }) {
    this.#write = options.write;
    this.#reliable = options.reliable;
    this.#ack = options.ack;
    this.#clock = options.clock;
  }

  /** Writes a message; for a reliable one, returns its sequence number and its acknowledgement. */
  send(out: Out): { seq: number; acked: Promise<void> } {
    if (!this.#reliable.has(out.kind)) {
      this.#emit(out, 0);
      return { seq: 0, acked: Promise.resolve() };
    }
    let seq = 0;
    const acked = new Promise<void>((resolve, reject) => {
      seq = this.#outbound.next({ sentAt: this.#clock.now(), resolve, reject });
    });
    this.#emit(out, seq);
    return { seq, acked };
  }

  /** Checks an arriving message's sequence number and applies its acks; throws protocol errors. */
  received(seq: number, ackSeq: number, ackedAhead?: readonly number[]): void {
    this.#inbound.receive(seq);
    for (const p of this.#outbound.acknowledge(ackSeq, ackedAhead)) p.resolve();
  }

  /** Marks reliable message `seq` as processed, in any order, to be acknowledged. */
  processed(seq: number): void {
    this.#inbound.processed(seq);
    this.#scheduleAck();
  }

  /** The cumulative acknowledgement: every reliable message up to it is processed. */
  get processedSeq(): number {
    return this.#inbound.ackSeq;
  }

  #scheduleAck(): void {
    if (this.#ackScheduled) return;
    this.#ackScheduled = true;
    setImmediate(() => {
      this.#ackScheduled = false;
      if (this.#closed || (this.#inbound.ackSeq <= this.#ackSent && !this.#inbound.hasUnlisted)) return;
      this.#emit(this.#ack, 0);
      // More processed ahead than one message lists: the next ack follows.
      if (this.#inbound.hasUnlisted) this.#scheduleAck();
    });
  }

  /** When the oldest unacknowledged message was sent, if any. */
  oldestUnackedAt(): number | undefined {
    return this.#outbound.oldest()?.sentAt;
  }

  /** Settles every unacknowledged message: `errorFor(seq)` says why it will never be acknowledged here. */
  close(errorFor: (seq: number) => unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [seq, p] of this.#outbound.pending()) p.reject(errorFor(seq));
  }

  #emit(out: Out, seq: number): void {
    if (this.#closed) return;
    this.#ackSent = this.#inbound.ackSeq;
    this.#write(out, seq, this.#ackSent, this.#inbound.takeAhead());
  }
}
