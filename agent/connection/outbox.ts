/**
 * Responses to the driver (assignment results, and later resource events and operation results)
 * that must not be lost. Each is sent on the current stream and kept until the driver acknowledges
 * it. A send fails when the stream ends before the acknowledgement, or when there is no stream when
 * the response is due; after a failure the response waits `driver.responseRetries.backOffMs` and is
 * tried again, up to `maxRetries` retries (none when retries are disabled), then dropped with an
 * error in the log. A new stream sends every waiting response at once, in the order they were made.
 * A response the driver refused by name is dropped at once: sending it again would be refused again.
 */
import type { Clock } from '../../shared/clock.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { AgentBody } from '../../shared/protocol/messages.ts';
import { Waker } from '../../shared/waker.ts';
import { CONNECTION_DEFAULTS, type ResponseRetrySettings } from './settings.ts';

export interface ReliableSink {
  readonly sessionId: string;
  sendReliable(out: AgentBody): { seq: number; acked: Promise<void> };
}

/** Marks the error a stream gives a response the driver refused by its sequence number. */
export const REFUSED_BY_DRIVER = 'refusedByDriver';

interface Entry {
  out: AgentBody;
  failures: number;
  notBefore: number;
  inFlight: boolean;
  done: boolean;
  sentOn?: { sessionId: string; seq: number };
  resolve(): void;
  reject(error: unknown): void;
}

function describe(out: AgentBody): string {
  const account = 'account' in out.body ? ` for ${String(out.body.account)}` : '';
  return `${out.kind}${account}`;
}

export class ResponseOutbox {
  readonly #entries: Entry[] = [];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #maxFailures: number;
  readonly #backOffMs: number;
  readonly #waker = new Waker();
  #sink: ReliableSink | undefined;
  readonly #drained: (() => void)[] = [];
  readonly #onRetry: ((out: AgentBody) => void) | undefined;

  /** `onRetry` is told of every failed attempt that will be tried again (`vendor_agent_retries_total`). */
  constructor(retries: ResponseRetrySettings | undefined, deps: { clock: Clock; log: Logger; onRetry?: (out: AgentBody) => void }) {
    const d = CONNECTION_DEFAULTS.responseRetries;
    this.#maxFailures = 1 + ((retries?.enabled ?? d.enabled) ? (retries?.maxRetries ?? d.maxRetries) : 0);
    this.#backOffMs = retries?.backOffMs ?? d.backOffMs;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#onRetry = deps.onRetry;
  }

  /**
   * Resolves when the driver has acknowledged `out`; rejects when it is dropped. On a live stream with
   * nothing older waiting to go out, `out` is written before this returns: an operation's result
   * leaves before whatever its worker does next (docs/operations.md#the-agents-part-of-the-path).
   */
  submit(out: AgentBody): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry: Entry = { out, failures: 0, notBefore: this.#clock.now(), inFlight: false, done: false, resolve, reject };
      const inOrder = this.#entries.every((e) => e.inFlight);
      this.#entries.push(entry);
      if (this.#sink !== undefined && inOrder) this.#send(entry, this.#sink);
      else this.#waker.wake();
    });
  }

  /**
   * A stream is ready. Responses already processed by the driver on the previous session (as the
   * driver's resume information says) count as delivered; the rest go out now.
   */
  attach(sink: ReliableSink, resume?: { previousSessionId: string; lastProcessedSeq: number }): void {
    this.#sink = sink;
    const now = this.#clock.now();
    for (const e of [...this.#entries]) {
      const sent = e.sentOn;
      if (resume && sent && sent.sessionId === resume.previousSessionId && sent.seq <= resume.lastProcessedSeq) {
        this.#settle(e);
        e.resolve();
      } else {
        e.notBefore = now;
      }
    }
    this.#waker.wake();
  }

  detach(): void {
    this.#sink = undefined;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Sends what is due, counts failed attempts while disconnected, until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const now = this.#clock.now();
      let nextDue = Infinity;
      for (const e of [...this.#entries]) {
        if (e.inFlight) continue;
        if (e.notBefore <= now) {
          if (this.#sink) {
            this.#send(e, this.#sink);
            continue;
          }
          this.#failed(e, new VendorError('unavailable', 'not connected to the driver'));
          if (e.done) continue;
        }
        nextDue = Math.min(nextDue, e.notBefore);
      }
      await this.#waker.wait(this.#clock, nextDue - now, signal);
    }
  }

  #send(e: Entry, sink: ReliableSink): void {
    e.inFlight = true;
    const { seq, acked } = sink.sendReliable(e.out);
    e.sentOn = { sessionId: sink.sessionId, seq };
    acked.then(
      () => {
        this.#settle(e);
        e.resolve();
      },
      (error: unknown) => {
        e.inFlight = false;
        if (e.done) return;
        if (isVendorError(error) && error.details[REFUSED_BY_DRIVER] === true) {
          this.#drop(e, error);
          return;
        }
        this.#failed(e, error);
        // A newer stream is already up: that is the retry, no need to wait.
        if (this.#sink !== undefined && this.#sink.sessionId !== e.sentOn?.sessionId) e.notBefore = this.#clock.now();
        this.#waker.wake();
      },
    );
  }

  #failed(e: Entry, error: unknown): void {
    e.failures++;
    if (e.failures >= this.#maxFailures) {
      this.#drop(
        e,
        new VendorError('unavailable', `${describe(e.out)} not delivered after ${e.failures} attempts: ${(error as Error).message}`),
      );
      return;
    }
    e.notBefore = this.#clock.now() + this.#backOffMs;
    this.#onRetry?.(e.out);
  }

  #drop(e: Entry, error: VendorError): void {
    this.#settle(e);
    this.#log.error({ kind: e.out.kind, failures: e.failures }, `response dropped: ${error.message}`);
    e.reject(error);
  }

  #settle(e: Entry): void {
    e.done = true;
    const i = this.#entries.indexOf(e);
    if (i >= 0) this.#entries.splice(i, 1);
    if (this.#entries.length === 0) for (const drained of this.#drained.splice(0)) drained();
  }

  /** Resolves when nothing waits for the driver's acknowledgement any more. */
  drained(): Promise<void> {
    if (this.#entries.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }
}
