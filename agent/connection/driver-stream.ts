/**
 * One stream from the agent to the driver: says hello, waits for the welcome, sends heartbeats at
 * the interval the driver asked for, hands the driver's messages to the agent in order and
 * acknowledges the reliable ones once handled. The stream ends, and `ended` says why, when the
 * driver ends it, when the driver stays silent for its lease, when an answer takes longer than
 * `timeoutSeconds`, or when the driver breaks the protocol.
 */
import { Metadata, type Client, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import type { Clock } from '../../shared/clock.ts';
import { VendorError, errorCodeOf, isVendorError, type ErrorCode } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { SequencedEndpoint } from '../../shared/protocol/endpoint.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import {
  AGENT_SERVICE_NAME,
  PROTOCOL_VERSION,
  RELIABLE_AGENT_BODIES,
  agentMessage,
  type AgentBody,
  type AgentMessage,
  type DriverEnvelope,
  type DriverMessage__Output,
  type Hello,
  type Welcome__Output,
} from '../../shared/protocol/messages.ts';
import { protocolError } from '../../shared/protocol/problems.ts';
import { SerialQueue } from '../../shared/protocol/serial-queue.ts';
import { parseDriverMessage } from '../../shared/protocol/validate.ts';
import { Waker } from '../../shared/waker.ts';
import {
  AUTHORIZATION_HEADER,
  ERROR_CODE_TRAILER,
  PROBLEM_SEQ_TRAILER,
  PROBLEM_TRAILER,
  bearerHeaderValue,
} from '../../shared/protocol/wire.ts';
import type { AgentPathTrace } from '../operations/trace.ts';
import { REFUSED_BY_DRIVER, type ReliableSink } from './outbox.ts';

/** Messages from the driver that the agent acts on (assign, remove, operation, resume info). */
export type DriverWork = Exclude<DriverEnvelope, { kind: 'welcome' | 'heartbeatAck' | 'ack' }>;

export interface StreamOptions {
  client: Client;
  token: string | undefined;
  hello: Hello;
  clock: Clock;
  log: Logger;
  /** 0: no limit. */
  timeoutMs: number;
  onWork(work: DriverWork): Promise<void> | void;
  /** Marks each operation's arrival (before its decoding) and its result's write. */
  trace?: AgentPathTrace;
}

export interface StreamEnd {
  error: VendorError;
  /** Sequence number of the agent message the driver refused by name, if it did. */
  refusedSeq?: number;
}

const CONNECT_PATH = `/${AGENT_SERVICE_NAME}/Connect`;

/** The `VendorError` a driver status stands for, using the code the driver put in the trailers. */
export function errorOfStatus(s: StatusObject): StreamEnd {
  const trailerCode = s.metadata.get(ERROR_CODE_TRAILER)[0];
  const code: ErrorCode = (typeof trailerCode === 'string' ? errorCodeOf(trailerCode) : undefined) ?? 'unavailable';
  const problem = s.metadata.get(PROBLEM_TRAILER)[0];
  const seqText = s.metadata.get(PROBLEM_SEQ_TRAILER)[0];
  const refusedSeq = typeof seqText === 'string' && /^\d+$/.test(seqText) ? Number(seqText) : undefined;
  const error = new VendorError(code, s.details || `stream ended with gRPC status ${s.code}`, {
    details: { grpcCode: s.code, ...(typeof problem === 'string' ? { problem } : {}) },
  });
  return refusedSeq === undefined ? { error } : { error, refusedSeq };
}

export class DriverStream implements ReliableSink {
  readonly welcome: Promise<Welcome__Output>;
  readonly ended: Promise<StreamEnd>;
  readonly #options: StreamOptions;
  readonly #call: ClientDuplexStream<AgentMessage, DriverMessage__Output>;
  readonly #endpoint: SequencedEndpoint<AgentBody>;
  readonly #queue: SerialQueue;
  readonly #stop = new AbortController();
  readonly #waker = new Waker();
  readonly #startedAt: number;
  #welcome: Welcome__Output | undefined;
  #lastReceivedAt: number;
  /** When the watch looks at its deadlines next (Infinity: only when woken). */
  #watchUntil = Infinity;
  /** With a trace: when the message being received arrived, before its decoding. */
  #arrivedAt = 0;
  #end: StreamEnd | undefined;
  #resolveWelcome: (w: Welcome__Output) => void = () => undefined;
  #rejectWelcome: (e: unknown) => void = () => undefined;
  #resolveEnded: (end: StreamEnd) => void = () => undefined;

  constructor(options: StreamOptions) {
    this.#options = options;
    this.#startedAt = this.#lastReceivedAt = options.clock.now();
    this.welcome = new Promise((resolve, reject) => {
      this.#resolveWelcome = resolve;
      this.#rejectWelcome = reject;
    });
    this.welcome.catch(() => undefined);
    this.ended = new Promise((resolve) => (this.#resolveEnded = resolve));

    const metadata = new Metadata();
    if (options.token !== undefined) metadata.set(AUTHORIZATION_HEADER, bearerHeaderValue(options.token));
    const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
    const trace = options.trace;
    this.#call = options.client.makeBidiStreamRequest(
      CONNECT_PATH,
      (m: AgentMessage) => connect.requestSerialize(m),
      trace === undefined
        ? (b: Buffer) => connect.responseDeserialize(b)
        : (b: Buffer) => {
            this.#arrivedAt = trace.now();
            return connect.responseDeserialize(b);
          },
      metadata,
    );
    this.#endpoint = new SequencedEndpoint<AgentBody>({
      write:
        trace === undefined
          ? (out, seq, ackSeq) => this.#call.write(agentMessage(out, seq, ackSeq))
          : (out, seq, ackSeq) => {
              // Marked as it is sent, like every send of the path; its CPU is counted after the write.
              const at = out.kind === 'operationResult' ? trace.now() : 0;
              this.#call.write(agentMessage(out, seq, ackSeq));
              if (out.kind === 'operationResult') trace.mark(out.body.operationId ?? '', 'resultWritten', at);
            },
      reliable: RELIABLE_AGENT_BODIES,
      ack: { kind: 'ack', body: {} },
      clock: options.clock,
    });
    this.#queue = new SerialQueue({
      onError: (e) => {
        options.log.error({ err: e }, `handling a driver message failed: ${(e as Error).message}`);
        this.close(e);
      },
      flow: this.#call,
    });
    this.#call.on('data', (m: DriverMessage__Output) => this.#receive(m));
    this.#call.on('error', () => undefined); // the status event below says everything
    this.#call.on('status', (s: StatusObject) => this.#finish(errorOfStatus(s)));

    this.#endpoint.send({ kind: 'hello', body: { ...options.hello, protocolVersion: PROTOCOL_VERSION } });
    void this.#watch();
  }

  get sessionId(): string {
    return this.#welcome?.sessionId ?? '';
  }

  sendReliable(out: AgentBody): { seq: number; acked: Promise<void> } {
    if (this.#end) return { seq: 0, acked: Promise.reject(this.#end.error) };
    // Only a first unacknowledged message can bring the watch's deadline closer, and only when its
    // acknowledgement is due before the watch looks next: an operation's result wakes nothing.
    const { timeoutMs, clock } = this.#options;
    const first = timeoutMs > 0 && this.#endpoint.oldestUnackedAt() === undefined;
    const sent = this.#endpoint.send(out);
    if (first && clock.now() + timeoutMs < this.#watchUntil) this.#waker.wake();
    return sent;
  }

  /** Sends a message that needs no acknowledgement; dropped when the stream has ended. */
  send(out: AgentBody): void {
    if (!this.#end) this.#endpoint.send(out);
  }

  /** Ends the stream from this side. */
  close(reason: unknown): void {
    const error = isVendorError(reason) ? reason : new VendorError('internal', 'agent stream failed', { cause: reason });
    this.#finish({ error });
    this.#call.cancel();
  }

  #receive(raw: DriverMessage__Output): void {
    if (this.#end) return;
    this.#lastReceivedAt = this.#options.clock.now();
    let env: DriverEnvelope;
    try {
      env = parseDriverMessage(raw);
      if (this.#welcome === undefined && env.kind !== 'welcome') {
        throw protocolError('out_of_order', `expected welcome as the first message, got ${env.kind}`);
      }
      if (this.#welcome !== undefined && env.kind === 'welcome') throw protocolError('out_of_order', 'welcome sent twice');
      if (env.kind === 'welcome' && env.body.protocolVersion !== PROTOCOL_VERSION) {
        throw protocolError('unsupported_protocol_version', `the driver speaks protocol version ${env.body.protocolVersion}, not ${PROTOCOL_VERSION}`);
      }
      this.#endpoint.received(env.seq, env.ackSeq, env.ackedAhead);
    } catch (e) {
      this.#options.log.error({ problem: isVendorError(e) ? e.details['problem'] : undefined }, `driver broke the protocol: ${(e as Error).message}`);
      this.close(e);
      return;
    }
    switch (env.kind) {
      case 'welcome':
        this.#welcome = env.body;
        this.#resolveWelcome(env.body);
        this.#waker.wake();
        void this.#heartbeats(env.body.heartbeatIntervalMs);
        return;
      case 'heartbeatAck':
      case 'ack':
        return;
      default: {
        const work = env;
        if (work.kind === 'operation') this.#options.trace?.mark(work.body.operationId, 'received', this.#arrivedAt);
        this.#queue.push(async () => {
          await this.#options.onWork(work);
          if (work.seq > 0) this.#endpoint.processed(work.seq);
        });
      }
    }
  }

  async #heartbeats(intervalMs: number): Promise<void> {
    for (let id = 1; ; id++) {
      try {
        await this.#options.clock.sleep(intervalMs, this.#stop.signal);
      } catch {
        return;
      }
      this.send({ kind: 'heartbeat', body: { id } });
    }
  }

  /** Ends the stream when the welcome, an acknowledgement, or any word from the driver is overdue. */
  async #watch(): Promise<void> {
    const { clock, timeoutMs } = this.#options;
    for (;;) {
      const deadlines: [number, () => VendorError][] = [];
      if (timeoutMs > 0 && this.#welcome === undefined) {
        deadlines.push([this.#startedAt + timeoutMs, () => new VendorError('timeout', `no welcome from the driver within ${timeoutMs} ms`)]);
      }
      const oldest = this.#endpoint.oldestUnackedAt();
      if (timeoutMs > 0 && oldest !== undefined) {
        deadlines.push([oldest + timeoutMs, () => new VendorError('timeout', `no acknowledgement from the driver within ${timeoutMs} ms`)]);
      }
      if (this.#welcome !== undefined) {
        const leaseMs = this.#welcome.leaseMs;
        deadlines.push([this.#lastReceivedAt + leaseMs, () => new VendorError('unavailable', `nothing from the driver for ${leaseMs} ms`)]);
      }
      const now = clock.now();
      const overdue = deadlines.find(([at]) => at <= now);
      if (overdue) {
        this.close(overdue[1]());
        return;
      }
      // A welcome or a send can bring a deadline closer; both wake this loop.
      this.#watchUntil = Math.min(...deadlines.map(([at]) => at));
      await this.#waker.wait(clock, this.#watchUntil - now, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
    }
  }

  #finish(end: StreamEnd): void {
    if (this.#end) return;
    this.#end = end;
    this.#stop.abort();
    this.#queue.stop();
    this.#endpoint.close((seq) =>
      seq === end.refusedSeq
        ? new VendorError(end.error.code, end.error.message, { details: { ...end.error.details, [REFUSED_BY_DRIVER]: true } })
        : end.error,
    );
    this.#rejectWelcome(end.error);
    this.#resolveEnded(end);
  }
}
