/**
 * One agent's stream on this driver: hello and welcome, heartbeats and the lease, sequence numbers
 * and acknowledgements, and the hand-off of every other message to the handler registered for its
 * kind (driver/handlers.ts). Messages are processed one at a time in arrival order, except those
 * about one account each (`keyOf`: answers to assignments, operation results), which run side by side,
 * in order per account (driver/keyed-serial.ts), and those a handler takes off the stream to finish
 * later (`HandledLater`); a cache message waits for its own account's keyed messages only. Each is
 * acknowledged once done, ahead of earlier ones still running (`acked_ahead`, docs/protocol.md
 * section 3). The receive
 * time that judges the lease is taken as each message arrives, so a slow table never makes a live
 * agent look dead.
 */
import { randomUUID } from 'node:crypto';
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { AgentIdentity } from '../shared/agents/identity.ts';
import type { Clock } from '../shared/clock.ts';
import { VendorError, isVendorError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { pathTrace, traceNow } from '../shared/operations/path-trace.ts';
import {
  PROTOCOL_VERSION,
  RELIABLE_AGENT_BODIES,
  RELIABLE_DRIVER_BODIES,
  SUPPORTED_PROTOCOL_VERSIONS,
  driverMessage,
  type AgentBodyKind,
  type AgentEnvelope,
  type AgentMessage__Output,
  type DriverBody,
  type DriverMessage,
  type Hello__Output,
} from '../shared/protocol/messages.ts';
import { protocolError } from '../shared/protocol/problems.ts';
import { SequencedEndpoint } from '../shared/protocol/endpoint.ts';
import { SerialQueue } from '../shared/protocol/serial-queue.ts';
import { KeyedSerial, type Slot } from './keyed-serial.ts';
import { parseAgentMessage } from '../shared/protocol/validate.ts';
import { STORE_BACKOFF_MAX_MS, isStoreOutage, storeBackoff } from './backoff.ts';
import { statusOfError } from './grpc-status.ts';
import type { ResumeState, SessionRecord, SessionStore } from './session-store.ts';
import { staticAccountsOf } from './account-settings.ts';
import { helloRefusal, helloRefused } from './hello-policy.ts';

/** What the service's deserializer hands on when the bytes are not a message at all. */
export class Undecodable {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/** What the service's deserializer hands on for a message: it, and its size on the wire. */
export interface DecodedAgentMessage {
  message: AgentMessage__Output;
  bytes: number;
}

export type IncomingAgentMessage = DecodedAgentMessage | Undecodable;

export interface SessionSettings {
  replicaId: string;
  /** Where this replica takes wakes, recorded on the session item (docs/protocol.md#6b-wakes). */
  wakeAddress?: string | undefined;
  heartbeatIntervalMs: number;
  leaseMs: number;
}

/** The agent message kinds modules handle; hello, heartbeat and ack belong to the endpoint. */
export type HandledKind = Exclude<AgentBodyKind, 'hello' | 'heartbeat' | 'ack'>;

export interface IncomingMessage<K extends HandledKind> {
  /** The message's sequence number; 0 for a message that is not reliable. */
  seq: number;
  body: NonNullable<AgentMessage__Output[K]>;
  /** Its size on the wire: what holding it until it is handled costs, roughly. */
  bytes: number;
}

/**
 * A handler's answer when it has taken the message off the stream and finishes it later: the stream
 * goes on with the next message at once, and the message is acknowledged once `done` resolves, ahead
 * of earlier messages still running when there are any. A rejection ends the stream as a handler's
 * error does.
 */
export interface HandledLater {
  readonly done: Promise<void>;
}

/** Messages about one account each, handled concurrently at most this many per stream. */
export const KEYED_IN_FLIGHT = 32;
/**
 * Besides those, room for this many more waiting per account the stream's agent holds as its account
 * item confirms: accounts whose results wait out a slow table fill their own share, and the stream
 * goes on being read for the others.
 */
const KEYED_PER_HELD = 4;

/**
 * The key a message kind's handling is ordered by, for kinds the session runs side by side, in order
 * per account: an agent's answers to assignments and its operation results each concern one account,
 * and one account's slow table write holds back no other account's.
 */
function keyOf(env: AgentEnvelope): string | undefined {
  return env.kind === 'assignmentResult' || env.kind === 'operationResult' ? accountKey(env.body.account) : undefined;
}

/** The account a message of another kind concerns: it waits for that account's keyed messages before it only. */
function accountOf(env: AgentEnvelope): string | undefined {
  return env.kind === 'resourceEvents' || env.kind === 'resumeQuery' || env.kind === 'podMetrics' ? env.body.account : undefined;
}

const accountKey = (account: string) => `account:${account}`;

/** How a module handles one kind (driver/handlers.ts). */
export type AgentMessageHandler<K extends HandledKind> = (message: IncomingMessage<K>, session: AgentSession) => Promise<void | HandledLater> | void | HandledLater;

export type AgentMessageHandlers = { [K in HandledKind]?: AgentMessageHandler<K> };

export interface SessionDeps {
  /** Who the stream's credential speaks for; what the agent may say and receive follows it. */
  identity: AgentIdentity;
  store: SessionStore;
  clock: Clock;
  log: Logger;
  settings: SessionSettings;
  /** What handles each agent message kind other than hello, heartbeat and ack. */
  handlers: AgentMessageHandlers;
  onOpen(session: AgentSession): void;
  onClose(session: AgentSession, reason: string): void;
}

/**
 * What this stream's agent holds of one account, as far as this stream knows: what it announced in
 * hello (`announced`, until the account item confirms it: `held`), what the driver sent and is
 * waiting to hear about (`sent`), what it confirmed (`held`) or could not use (`failed`), and what
 * is being taken off it (`removing`). Only `held` is trusted: an announcement is the agent's word.
 */
export interface Holding {
  generation: number;
  caching: boolean;
  cachingEpoch: number;
  state: 'announced' | 'sent' | 'held' | 'failed' | 'removing';
}

export class AgentSession {
  readonly id = randomUUID();
  readonly peer: string;
  readonly #call: ServerDuplexStream<IncomingAgentMessage, DriverMessage>;
  readonly #deps: SessionDeps;
  readonly #endpoint: SequencedEndpoint<DriverBody>;
  readonly #queue: SerialQueue;
  /** Messages of this stream about one account each, run side by side (`keyOf`). */
  readonly #keyed = new KeyedSerial<AgentSession>({ running: KEYED_IN_FLIGHT, perSource: KEYED_IN_FLIGHT, morePerSource: (s) => KEYED_PER_HELD * s.heldCount() });
  /** Those of them not yet done: a message of another kind waits for them. */
  readonly #keyedInFlight = new Map<string, Set<Promise<void>>>();
  readonly #stop = new AbortController();
  #hello: Hello__Output | undefined;
  #record: SessionRecord | undefined;
  #lastProcessedSeq = 0;
  #opened = false;
  #ended = false;
  #lastReceivedAt: number;
  #lastRenewAt: number;
  #closedReason: string | undefined;
  #closedCode: string | undefined;
  #closeWritten: Promise<void> = Promise.resolve();
  #renewFailing = false;
  #renewing = false;
  /** From the hello until its session is recorded (or refused): the lease does not run out meanwhile. */
  #helloRecording = false;

  constructor(call: ServerDuplexStream<IncomingAgentMessage, DriverMessage>, deps: SessionDeps) {
    this.#call = call;
    this.#deps = deps;
    this.peer = call.getPeer();
    this.#lastReceivedAt = this.#lastRenewAt = deps.clock.now();
    this.#endpoint = new SequencedEndpoint<DriverBody>({
      write: (out, seq, ackSeq, ackedAhead) => call.write(driverMessage(out, seq, ackSeq, ackedAhead)),
      reliable: RELIABLE_DRIVER_BODIES,
      ack: { kind: 'ack', body: {} },
      clock: deps.clock,
    });
    this.#queue = new SerialQueue({ onError: (e) => this.end(e), flow: call });
    call.on('data', (m: IncomingAgentMessage) => this.#receive(m));
    call.on('end', () => {
      this.#finish('agent closed the stream', 'agent_closed');
      call.end();
    });
    call.on('cancelled', () => this.#finish('stream cancelled', 'cancelled'));
    call.on('error', () => this.#finish('stream failed', 'stream_failed'));
    // From the start, not from the welcome: a stream that never says hello is ended too.
    void this.#watchLease();
  }

  /** Who the stream's credential speaks for (docs/security.md, "Agent identities"). */
  get identity(): AgentIdentity {
    return this.#deps.identity;
  }

  get agentId(): string {
    return this.#hello?.agentId ?? '';
  }

  get zone(): string {
    return this.#hello?.zone ?? '';
  }

  get hello(): Hello__Output | undefined {
    return this.#hello;
  }

  get closedReason(): string | undefined {
    return this.#closedReason;
  }

  /** Why the stream ended, from a bounded set: agent_closed, cancelled, stream_failed, or the error code it was ended with. */
  get closedCode(): string | undefined {
    return this.#closedCode;
  }

  /** Settles once the end of this session is written to the table (at once for a stream never welcomed). */
  get closeWritten(): Promise<void> {
    return this.#closeWritten;
  }

  /** True from the welcome until the stream ends. */
  get open(): boolean {
    return this.#opened && !this.#ended;
  }

  /** The accounts of this stream's agent, by name; kept by the assignment module. */
  readonly holdings = new Map<string, Holding>();

  /** Accounts this stream's agent holds as their items confirm (`held`), or only those it caches. */
  heldCount(options: { caching?: boolean } = {}): number {
    let n = 0;
    for (const h of this.holdings.values()) if (h.state === 'held' && (options.caching !== true || h.caching)) n++;
    return n;
  }

  /** Sends a message; reliable ones resolve when the agent acknowledges them. */
  send(out: DriverBody): Promise<void> {
    if (this.#ended) return Promise.reject(new VendorError('unavailable', 'the agent stream has ended'));
    if (!this.#opened) return Promise.reject(new VendorError('conflict', 'the agent has not been welcomed yet'));
    return this.#endpoint.send(out).acked;
  }

  /** Ends the stream with `error` as its status. */
  end(error: unknown): void {
    if (this.#ended) return;
    const reason = error instanceof Error ? error.message : 'ended';
    const level = isVendorError(error) ? 'warn' : 'error';
    this.#deps.log[level](
      {
        sessionId: this.id,
        agentId: this.agentId,
        identity: this.identity.name,
        peer: this.peer,
        code: isVendorError(error) ? error.code : 'internal',
        problem: isVendorError(error) ? error.details['problem'] : undefined,
        refused: isVendorError(error) ? error.details['refused'] : undefined,
        boundTo: isVendorError(error) ? error.details['boundTo'] : undefined,
        err: isVendorError(error) ? undefined : error,
      },
      `agent stream ended: ${reason}`,
    );
    this.#finish(reason, isVendorError(error) ? error.code : 'internal');
    this.#call.emit('error', statusOfError(error));
  }

  #receive(raw: IncomingAgentMessage): void {
    if (this.#ended) return;
    const arrived = pathTrace === undefined ? 0 : traceNow();
    const now = this.#deps.clock.now();
    this.#lastReceivedAt = now;
    let env: AgentEnvelope;
    try {
      env = this.#check(raw);
    } catch (e) {
      this.end(e);
      return;
    }
    if (env.kind === 'operationResult') pathTrace?.('replica.result_received', env.body.operationId, arrived);
    // One renewal at a time: a table that hangs would otherwise collect one per heartbeat.
    if (this.#opened && this.#record !== undefined && !this.#renewing && now - this.#lastRenewAt >= this.#deps.settings.heartbeatIntervalMs) {
      this.#lastRenewAt = now;
      this.#renewing = true;
      this.#deps.store.renew(this.#record, now + this.#deps.settings.leaseMs, this.#lastProcessedSeq, now).finally(() => {
        this.#renewing = false;
      }).then(
        (held) => {
          if (this.#renewFailing) this.#deps.log.info({ sessionId: this.id, agentId: this.agentId }, 'lease renewed again');
          this.#renewFailing = false;
          if (!held) this.end(new VendorError('conflict', `a newer stream of agent ${this.agentId} has taken its session over`));
        },
        (e: unknown) => {
          // Once per run of failures: a table that is gone would otherwise log this for every agent at every heartbeat.
          if (!this.#renewFailing) this.#deps.log.warn({ sessionId: this.id, agentId: this.agentId, err: e instanceof Error ? e.message : e }, 'lease renewal failed; the stream stays up and it is tried again at the next heartbeat');
          this.#renewFailing = true;
        },
      );
    }
    // Liveness is answered at once, not behind messages waiting for the table, so neither end gives
    // up on a stream only because the store is slow.
    if (this.#opened && (env.kind === 'heartbeat' || env.kind === 'ack')) {
      if (env.kind === 'heartbeat') this.#endpoint.send({ kind: 'heartbeatAck', body: { id: env.body.id } });
      return;
    }
    const bytes = raw instanceof Undecodable ? 0 : raw.bytes;
    this.#queue.push(() => this.#process(env, bytes));
  }

  /** The checks that need no I/O, made as the message arrives. */
  #check(raw: IncomingAgentMessage): AgentEnvelope {
    if (raw instanceof Undecodable) throw protocolError('malformed', `undecodable message: ${raw.reason}`);
    let env: AgentEnvelope;
    try {
      env = parseAgentMessage(raw.message);
    } catch (e) {
      // Name the offending reliable message so the agent drops it instead of sending it forever.
      if (isVendorError(e) && raw.message.seq > 0) throw protocolError('malformed', e.message, { issues: e.issues, details: { seq: raw.message.seq } });
      throw e;
    }
    if (this.#hello === undefined && env.kind !== 'hello') {
      throw protocolError('out_of_order', `expected hello as the first message, got ${env.kind}`);
    }
    if (this.#hello !== undefined && env.kind === 'hello') throw protocolError('out_of_order', 'hello sent twice');
    if (env.kind === 'hello') {
      if (!SUPPORTED_PROTOCOL_VERSIONS.includes(env.body.protocolVersion)) {
        throw protocolError(
          'unsupported_protocol_version',
          `unknown protocol version ${env.body.protocolVersion}; this driver speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
        );
      }
      this.#hello = env.body;
    }
    this.#endpoint.received(env.seq, env.ackSeq);
    return env;
  }

  async #process(env: AgentEnvelope, bytes: number): Promise<void> {
    switch (env.kind) {
      case 'hello':
        return this.#open(env.body);
      case 'heartbeat':
        this.#endpoint.send({ kind: 'heartbeatAck', body: { id: env.body.id } });
        return;
      case 'ack':
        return;
      default:
        return this.#dispatch(env, bytes);
    }
  }

  /** Hands a message to the handler of its kind; a reliable one is acknowledged once that is done. */
  async #dispatch(env: Exclude<AgentEnvelope, { kind: 'hello' | 'heartbeat' | 'ack' }>, bytes: number): Promise<void> {
    const kind: HandledKind = env.kind;
    const handler = this.#deps.handlers[kind] as ((m: { seq: number; body: typeof env.body; bytes: number }, s: AgentSession) => Promise<void | HandledLater> | void | HandledLater) | undefined;
    if (handler === undefined) {
      throw protocolError('unsupported_message', `${env.kind} is not handled by this driver yet`, {
        details: env.seq > 0 ? { seq: env.seq } : {},
      });
    }
    const named = (e: unknown) => {
      // A refusal of one reliable message names it, so the agent drops it instead of resending it forever.
      if (isVendorError(e) && e.code === 'protocol_error' && env.seq > 0 && e.details['seq'] === undefined) {
        return new VendorError(e.code, e.message, { issues: e.issues, details: { ...e.details, seq: env.seq } });
      }
      return e;
    };
    const handle = (slot?: Slot) => this.#untilStored(env.kind, env.seq, () => handler({ seq: env.seq, body: env.body, bytes }, this), slot);
    let later: HandledLater | undefined;
    const key = keyOf(env);
    if (key !== undefined) {
      // Taken off the stream once it has a slot (a full stream stops being read): it runs behind its
      // own account's earlier messages only.
      later = await this.#keyed.admit(this, key, async (slot) => {
        const own = await handle(slot);
        if (own) await own.done;
      });
      const done = later.done.catch(() => undefined);
      let inFlight = this.#keyedInFlight.get(key);
      if (inFlight === undefined) this.#keyedInFlight.set(key, (inFlight = new Set()));
      inFlight.add(done);
      const own = inFlight;
      void done.then(() => {
        own.delete(done);
        if (own.size === 0 && this.#keyedInFlight.get(key) === own) this.#keyedInFlight.delete(key);
      });
    } else {
      // A message of another kind sees the keyed messages before it of its account done (an account's
      // cache data after the answer that confirmed the account), or all of them when it names none.
      const account = accountOf(env);
      if (account === undefined) {
        while (this.#keyedInFlight.size > 0) await Promise.all([...this.#keyedInFlight.values()].flatMap((set) => [...set]));
      } else {
        const key = accountKey(account);
        for (let set = this.#keyedInFlight.get(key); set !== undefined && set.size > 0; set = this.#keyedInFlight.get(key)) await Promise.all(set);
      }
      try {
        later = (await handle()) ?? undefined;
      } catch (e) {
        throw named(e);
      }
    }
    const seq = RELIABLE_AGENT_BODIES.has(env.kind) ? env.seq : 0;
    if (later === undefined) {
      if (seq > 0) this.#processed(seq);
      return;
    }
    // Finished later: acknowledged when done, ahead of earlier messages still waiting (another
    // account's behind a slow table, docs/protocol.md section 3), so they hold back no other account.
    later.done.then(
      () => {
        if (seq > 0) this.#processed(seq);
      },
      (e: unknown) => this.end(named(e)),
    );
  }

  #processed(seq: number): void {
    this.#endpoint.processed(seq);
    this.#lastProcessedSeq = this.#endpoint.processedSeq;
  }

  /**
   * Runs a handler again while the table is not answering, with growing waits, until it succeeds,
   * fails for another reason, or the stream ends. Handlers are idempotent by their message's keys,
   * and the message is acknowledged only once its handler has succeeded: nothing the agent was told
   * is stored is lost, and the stream stays up through an outage instead of being ended and
   * reopened (which the outage would refuse too). A message run per account (`slot`) waits without
   * its running place, so other accounts' messages run meanwhile.
   */
  async #untilStored<T>(kind: string, seq: number, run: () => Promise<T> | T, slot?: Slot): Promise<T> {
    const { clock, log } = this.#deps;
    const backoff = storeBackoff(100, STORE_BACKOFF_MAX_MS);
    for (;;) {
      try {
        const result = await run();
        if (backoff.failures > 0) log.info({ sessionId: this.id, agentId: this.agentId, kind, seq, tries: backoff.failures + 1 }, 'the table answered: the message is processed');
        return result;
      } catch (e) {
        if (!isStoreOutage(e) || this.#ended) throw e;
        const waitMs = Math.round(backoff.failed());
        if (backoff.failures === 1) {
          log.warn({ sessionId: this.id, agentId: this.agentId, kind, seq, err: e instanceof Error ? e.message : e }, 'the table is not answering: the message waits');
        }
        const waited = clock.sleep(waitMs, this.#stop.signal).catch(() => undefined);
        await (slot === undefined ? waited : slot.idle(waited));
        if (this.#ended) throw new VendorError('unavailable', 'the agent stream has ended');
      }
    }
  }

  /** Refuses a hello that claims what the stream's identity does not allow; nothing is recorded then. */
  async #checkClaims(hello: Hello__Output): Promise<void> {
    const refusal = helloRefusal(this.identity, hello);
    if (refusal === undefined) return;
    if (refusal.claim !== 'staticAccounts') throw helloRefused(refusal.message, refusal.claim);
    // A static definition of a driver-defined name would override it (docs/api.md): named as such.
    // The refusal stands either way; a table that does not answer only leaves that note out. Only the
    // names the message shows are looked up, however many the hello holds.
    const driverDefined = await this.#deps.store.driverDefined(refusal.names.slice(0, 10)).catch(() => []);
    const also = driverDefined.length === 0 ? '' : ` (driver-defined: ${driverDefined.map((n) => JSON.stringify(n)).join(', ')})`;
    throw helloRefused(`${refusal.message}${also}`, refusal.claim);
  }

  async #open(hello: Hello__Output): Promise<void> {
    const { settings, clock, store, log } = this.#deps;
    await this.#checkClaims(hello);
    const now = clock.now();
    const record: SessionRecord = {
      sessionId: this.id,
      agentId: hello.agentId,
      zone: hello.zone,
      agentVersion: hello.agentVersion,
      identity: this.identity.name,
      unzoned: this.identity.unzoned,
      replicaId: settings.replicaId,
      peer: this.peer,
      wake: settings.wakeAddress,
      openedAt: now,
      leaseExpiresAt: this.#lastReceivedAt + settings.leaseMs,
      staticAccounts: staticAccountsOf(hello, (problem) => log.warn({ sessionId: this.id, agentId: hello.agentId, peer: this.peer }, problem)),
    };
    let resume: ResumeState;
    this.#helloRecording = true;
    try {
      resume = await store.open(record, hello.previousSessionId, this.#stop.signal);
    } catch (e) {
      // The agent tries again after its reconnect wait; nothing was welcomed, so nothing is lost.
      if (isStoreOutage(e)) throw new VendorError('unavailable', 'the table is not answering: the session cannot be recorded; try again', { cause: e });
      throw e;
    } finally {
      this.#helloRecording = false;
    }
    // A hello that waited for its turn (docs/protocol.md, "Sessions are kept in the table") has its lease from its welcome on.
    this.#lastReceivedAt = Math.max(this.#lastReceivedAt, clock.now());
    this.#record = record;
    if (this.#ended) {
      await store.close(record, this.#closedReason ?? 'ended', clock.now(), this.#lastProcessedSeq);
      return;
    }
    for (const held of hello.heldAccounts) {
      this.holdings.set(held.name, { generation: held.generation, caching: held.caching, cachingEpoch: held.cachingEpoch, state: 'announced' });
    }
    this.#opened = true;
    this.#lastRenewAt = now;
    this.#endpoint.send({
      kind: 'welcome',
      body: {
        sessionId: this.id,
        driverReplicaId: settings.replicaId,
        protocolVersion: PROTOCOL_VERSION,
        heartbeatIntervalMs: settings.heartbeatIntervalMs,
        leaseMs: settings.leaseMs,
        resume,
      },
    });
    log.info(
      { sessionId: this.id, agentId: hello.agentId, zone: hello.zone, identity: this.identity.name, agentVersion: hello.agentVersion, peer: this.peer, held: hello.heldAccounts.length },
      'agent session opened',
    );
    this.#deps.onOpen(this);
  }

  async #watchLease(): Promise<void> {
    const { clock, settings } = this.#deps;
    try {
      for (;;) {
        const wait = this.#lastReceivedAt + settings.leaseMs - clock.now();
        if (wait <= 0 && !this.#helloRecording) break;
        // The agent has said hello and waits for its welcome: the wait is the driver's, not the agent's silence.
        if (wait <= 0) {
          await clock.sleep(settings.leaseMs, this.#stop.signal);
          continue;
        }
        await clock.sleep(wait, this.#stop.signal);
      }
    } catch {
      return; // the stream ended first
    }
    this.end(new VendorError('timeout', `lease expired: nothing received from the agent for ${settings.leaseMs} ms`));
  }

  #finish(reason: string, code: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#closedReason = reason;
    this.#closedCode = code;
    this.#stop.abort();
    this.#queue.stop();
    const gone = new VendorError('unavailable', `the agent stream has ended: ${reason}`);
    this.#endpoint.close(() => gone);
    if (this.#opened && this.#record !== undefined) {
      this.#closeWritten = this.#deps.store.close(this.#record, reason, this.#deps.clock.now(), this.#lastProcessedSeq).catch((e: unknown) => {
        this.#deps.log.error({ sessionId: this.id, err: e }, 'closing the session record failed');
      });
      this.#deps.log.info({ sessionId: this.id, agentId: this.agentId, reason }, 'agent session closed');
    }
    this.#deps.onClose(this, reason);
  }
}
