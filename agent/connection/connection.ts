/**
 * The agent's connection to the driver (`driver.*` of vendor-agent.yml): dials `driver.grpc`,
 * keeps one stream open, and when it ends waits `kubernetes.reconnectTimeoutMs` (with jitter, so a
 * fleet of agents does not come back in lockstep) and dials again, forever. Every stream starts
 * with a fresh hello, so the driver learns again who the agent is and what it holds.
 */
import { Client } from '@grpc/grpc-js';
import { backoffDelay } from '../../shared/backoff.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { AgentBody, Hello, Welcome__Output } from '../../shared/protocol/messages.ts';
import type { AgentPathTrace } from '../operations/trace.ts';
import { channelCredentials, channelOptions } from './channel.ts';
import { DriverStream, type DriverWork, type StreamEnd } from './driver-stream.ts';
import { ResponseOutbox } from './outbox.ts';
import { CONNECTION_DEFAULTS, type ConnectionSettings } from './settings.ts';
import { TokenSource } from './token-source.ts';

/** The part of hello the agent supplies; asked again before every stream. */
export type HelloContent = Omit<Hello, 'protocolVersion' | 'previousSessionId'>;

export interface ConnectionDeps {
  settings: ConnectionSettings;
  hello(): HelloContent;
  /** Handles the driver's assignments, removals and (later) operations; acknowledged once it returns. */
  onWork(work: DriverWork): Promise<void> | void;
  log: Logger;
  clock?: Clock;
  /** Uniform in [0, 1); drives the reconnect jitter. */
  random?: () => number;
  /** A response to the driver failed and will be sent again (driver.responseRetries). */
  onRetry?(out: AgentBody): void;
  /** Marks each operation's arrival and its result's write (agent/operations/trace.ts). */
  trace?: AgentPathTrace;
  /** Told about every welcome and every stream end, for health reporting. */
  onState?(state: { connected: true; welcome: Welcome__Output } | { connected: false; end: StreamEnd }): void;
}

/** Reconnect waits are spread over ±20 % of `kubernetes.reconnectTimeoutMs`. */
const JITTER = 0.2;

export class DriverConnection {
  readonly #deps: ConnectionDeps;
  readonly #clock: Clock;
  readonly #tokens: TokenSource;
  readonly #outbox: ResponseOutbox;
  #stream: DriverStream | undefined;
  #lastSessionId = '';

  constructor(deps: ConnectionDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    const driver = deps.settings.driver ?? {};
    this.#tokens = new TokenSource(driver.auth, { clock: this.#clock, log: deps.log, retryMs: this.#reconnectMs() });
    this.#outbox = new ResponseOutbox(driver.responseRetries, {
      clock: this.#clock,
      log: deps.log,
      ...(deps.onRetry === undefined ? {} : { onRetry: deps.onRetry }),
    });
  }

  /** The session id of the live stream, or undefined between streams. */
  get sessionId(): string | undefined {
    return this.#stream?.sessionId || undefined;
  }

  /** Sends a response that must reach the driver; resolves when acknowledged, rejects when dropped. */
  respond(out: AgentBody): Promise<void> {
    return this.#outbox.submit(out);
  }

  /** Sends a message that may be lost (pod metrics, a resume query); dropped while disconnected. */
  notify(out: AgentBody): boolean {
    if (this.#stream === undefined || this.sessionId === undefined) return false;
    this.#stream.send(out);
    return true;
  }

  /** Whether a stream is open and welcomed. */
  get connected(): boolean {
    return this.sessionId !== undefined;
  }

  /**
   * Waits, at most `timeoutMs`, until every response is acknowledged by the driver; true when they
   * all were. Returns at once when no stream is open, since nothing could be delivered.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.#outbox.size === 0) return true;
    if (!this.connected) return false;
    const stop = new AbortController();
    try {
      return await Promise.race([
        this.#outbox.drained().then(() => true),
        this.#clock.sleep(timeoutMs, stop.signal).then(() => false),
      ]);
    } finally {
      stop.abort();
    }
  }

  /** Ends the current stream; the next one (after the usual wait) says hello again. */
  reconnect(reason: string): void {
    this.#stream?.close(new VendorError('unavailable', reason));
  }

  /** Runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    this.#tokens.start(signal);
    const outbox = this.#outbox.run(signal);
    const driver = this.#deps.settings.driver ?? {};
    if (driver.insecure && (driver.auth?.token !== undefined || driver.auth?.tokenCommand !== undefined)) {
      this.#deps.log.warn('driver.insecure is set: the bearer token travels unencrypted');
    }
    for (let first = true; !signal.aborted; first = false) {
      if (!first) {
        const base = this.#reconnectMs();
        // The same wait after every stream end: it does not grow, only spreads.
        const wait = backoffDelay({ baseMs: base, maxMs: base, factor: 1, jitter: [1 - JITTER, 1 + JITTER], round: true }, 1, this.#deps.random);
        try {
          await this.#clock.sleep(wait, signal);
        } catch {
          break;
        }
      }
      await this.#connectOnce(signal);
    }
    await outbox;
  }

  #reconnectMs(): number {
    return this.#deps.settings.kubernetes?.reconnectTimeoutMs ?? CONNECTION_DEFAULTS.reconnectTimeoutMs;
  }

  /** One dial and the life of its stream; reports every failure and never throws. */
  async #connectOnce(signal: AbortSignal): Promise<void> {
    const { log, settings } = this.#deps;
    const driver = settings.driver ?? {};
    const target = driver.grpc ?? CONNECTION_DEFAULTS.grpc;
    let token: string | undefined;
    let client: Client;
    try {
      token = await this.#tokens.token();
      client = new Client(target, channelCredentials(driver), channelOptions(driver));
    } catch (e) {
      log.error({ target }, `cannot connect to the driver: ${(e as Error).message}`);
      const error = isVendorError(e) ? e : new VendorError('internal', 'cannot connect to the driver', { cause: e });
      this.#deps.onState?.({ connected: false, end: { error } });
      return;
    }
    const stream = new DriverStream({
      client,
      token,
      hello: { ...this.#deps.hello(), previousSessionId: this.#lastSessionId },
      clock: this.#clock,
      log,
      timeoutMs: (settings.timeoutSeconds ?? CONNECTION_DEFAULTS.timeoutSeconds) * 1000,
      onWork: (work) => this.#deps.onWork(work),
      ...(this.#deps.trace === undefined ? {} : { trace: this.#deps.trace }),
    });
    const onAbort = () => stream.close(new VendorError('unavailable', 'agent stopping'));
    signal.addEventListener('abort', onAbort, { once: true });
    this.#stream = stream;
    try {
      const welcome = await stream.welcome;
      const previous = this.#lastSessionId;
      this.#lastSessionId = welcome.sessionId;
      log.info({ target, sessionId: welcome.sessionId, driverReplicaId: welcome.driverReplicaId }, 'connected to the driver');
      this.#outbox.attach(
        stream,
        welcome.resume?.known ? { previousSessionId: previous, lastProcessedSeq: welcome.resume.lastProcessedSeq } : undefined,
      );
      this.#deps.onState?.({ connected: true, welcome });
    } catch {
      // the stream ended before the welcome; `ended` says why
    }
    const end = await stream.ended;
    this.#outbox.detach();
    this.#stream = undefined;
    signal.removeEventListener('abort', onAbort);
    client.close();
    if (end.error.code === 'unauthenticated') this.#tokens.invalidate();
    if (!signal.aborted) {
      log.warn(
        { target, code: end.error.code, problem: isVendorError(end.error) ? end.error.details['problem'] : undefined },
        `driver stream ended: ${end.error.message}`,
      );
    }
    this.#deps.onState?.({ connected: false, end });
  }
}
