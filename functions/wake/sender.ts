/**
 * The API's side of wakes (docs/protocol.md#6b-wakes). Once work for the driver is durably written
 * (a feed entry, a queued operation) the API sends a signed datagram to the replicas that hold the
 * agent sessions concerned, so they read the table now instead of at their next poll. Which replicas
 * comes from the session items (their `wake` address), read once per zone and kept `cacheMs`; a wake
 * that finds them older than three quarters of that has them read again beside it, so that while
 * work keeps coming no wake waits for the read. The request never waits for this and it never fails
 * one: a wake that is not sent, or lost, costs at most a poll interval.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { liveSessions, type Session } from '../../shared/table/agents/sessions.ts';
import { parseWakeAddress } from '../../shared/wake/address.ts';
import { encodeWake, namesOperation, type WakeName, type WakeTopic } from '../../shared/wake/message.ts';
import { ResultAsker } from './result-asker.ts';
import { Reserver } from './reserver.ts';
import { replicaConnections } from './replica-request.ts';
import type { WakeTarget } from './target.ts';

/** How long the sessions of a zone, once read, are taken as still current. */
export const WAKE_SESSIONS_CACHE_MS = 1_000;
/** How long finding the replicas may take before the wake is given up. */
export const WAKE_LOOKUP_TIMEOUT_MS = 1_000;
/** Sessions kept longer than this share of `cacheMs` are read again in the background, still used meanwhile. */
const REFRESH_AT = 0.75;

export interface WakeSenderOptions {
  table: TableRef;
  clock: Clock;
  log: Logger;
  secret: string;
  cacheMs?: number;
  lookupTimeoutMs?: number;
  /** How long a reservation's answer is waited for (`RESERVE_ANSWER_WAIT_MS`). */
  reserveWaitMs?: number;
}

export class WakeSender {
  readonly #options: WakeSenderOptions;
  readonly #sessions = new Map<string, { at: number; sessions: readonly Session[] }>();
  /** Reads of a zone's sessions under way: one at a time per zone. */
  readonly #reading = new Map<string, Promise<readonly Session[]>>();
  readonly #pending = new Set<Promise<void>>();
  readonly #sockets = new Map<'udp4' | 'udp6', Socket>();
  #failuresLogged = 0;

  /** Asks the replicas whether an operation someone waits for has finished (result-asker.ts). */
  readonly results: ResultAsker;
  /** Asks a replica to set an agent aside for an operation about to be stored (reserver.ts). */
  readonly reservations: Reserver;

  constructor(options: WakeSenderOptions) {
    this.#options = options;
    const connections = replicaConnections();
    this.results = new ResultAsker({ replicas: this, secret: options.secret, clock: options.clock, connections });
    // Its verdicts go out on the wakes' socket and are waited for as wakes are (`settled`).
    this.reservations = new Reserver({
      replicas: this,
      secret: options.secret,
      clock: options.clock,
      connections,
      tell: (datagram, address) => this.#background(this.#send(datagram, address)),
      ...(options.reserveWaitMs === undefined ? {} : { waitMs: options.reserveWaitMs }),
    });
  }

  /** The live sessions of `zone` as just read by the request (an activation checks them): no read of its own then. */
  remember(zone: string | undefined, sessions: readonly Session[]): void {
    this.#sessions.set(zone ?? '', { at: this.#options.clock.now(), sessions });
  }

  /**
   * Wakes the replicas of `targets` about `topic`, in the background; an `operations` wake may name the
   * operation just queued, which the woken replica claims at once instead of reading the queue first,
   * and an `accounts` wake the one account a write changed, which it settles without reading the feed.
   */
  wake(topic: WakeTopic, targets: readonly WakeTarget[], named?: WakeName): void {
    if (targets.length === 0) return;
    this.#background(
      this.#wake(topic, targets, named).catch((err: unknown) => {
        // Wakes are an optimisation: the replicas' polls carry the work anyway.
        if (this.#failuresLogged++ < 5) this.#options.log.warn({ err: err instanceof Error ? err.message : String(err), topic }, 'wake not sent');
      }),
    );
  }

  #background(run: Promise<void>): void {
    this.#pending.add(run);
    void run.finally(() => this.#pending.delete(run));
  }

  /** Resolves when the wakes under way are sent, or after `ms`, whichever is first (a Lambda function waits before it returns). */
  async settled(ms: number): Promise<void> {
    if (this.#pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.#pending]), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  close(): void {
    this.results.close();
    this.reservations.close();
    for (const s of this.#sockets.values()) s.close();
    this.#sockets.clear();
  }

  /**
   * The wake addresses of the replicas `targets` name: those holding the live sessions of its agents,
   * or of every live agent of the zone when none of them is live (the session items, read as `wake` does).
   */
  async addresses(targets: readonly WakeTarget[]): Promise<string[]> {
    const addresses = new Set<string>();
    for (const target of targets) {
      const sessions = await this.#zoneSessions(target.zone);
      const wanted = new Set(target.agents ?? []);
      const holders = sessions.filter((s) => wanted.has(s.agentId));
      for (const s of holders.length > 0 ? holders : sessions) if (s.wake !== undefined) addresses.add(s.wake);
    }
    return [...addresses];
  }

  async #wake(topic: WakeTopic, targets: readonly WakeTarget[], named: WakeName | undefined): Promise<void> {
    const addresses = await this.addresses(targets);
    const datagram = encodeWake(this.#options.secret, topic, this.#options.clock.now(), undefined, named);
    if (named !== undefined && namesOperation(named)) pathTrace?.('api.wake_sent', named.id);
    await Promise.all(addresses.map((a) => this.#send(datagram, a)));
  }

  async #zoneSessions(zone: string | undefined): Promise<readonly Session[]> {
    const key = zone ?? '';
    const known = this.#sessions.get(key);
    const cacheMs = this.#options.cacheMs ?? WAKE_SESSIONS_CACHE_MS;
    const age = known === undefined ? Infinity : this.#options.clock.now() - known.at;
    if (known === undefined || age >= cacheMs) return this.#read(zone);
    // Read again beside this wake, not before the next one.
    if (age >= cacheMs * REFRESH_AT) this.#read(zone).catch(() => undefined);
    return known.sessions;
  }

  /** Reads the live sessions of `zone` and keeps them; a read already under way is shared. */
  #read(zone: string | undefined): Promise<readonly Session[]> {
    const key = zone ?? '';
    const under = this.#reading.get(key);
    if (under !== undefined) return under;
    const { clock, table } = this.#options;
    const now = clock.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the session items did not come in time')), this.#options.lookupTimeoutMs ?? WAKE_LOOKUP_TIMEOUT_MS);
      timer.unref();
    });
    const read = Promise.race([liveSessions(table, now, zone), timeout])
      .then((sessions) => {
        this.#sessions.set(key, { at: now, sessions });
        return sessions;
      })
      .finally(() => {
        clearTimeout(timer);
        this.#reading.delete(key);
      });
    this.#reading.set(key, read);
    return read;
  }

  #send(datagram: Buffer, address: string): Promise<void> {
    const parsed = parseWakeAddress(address);
    if (parsed === undefined) return Promise.resolve();
    const type = isIPv6(parsed.host) ? 'udp6' : 'udp4';
    let socket = this.#sockets.get(type);
    if (socket === undefined) {
      socket = createSocket(type);
      // A datagram that cannot be delivered comes back as an error on the socket: nothing to do.
      socket.on('error', () => undefined);
      socket.unref();
      this.#sockets.set(type, socket);
    }
    const s = socket;
    return new Promise<void>((resolve) => s.send(datagram, parsed.port, parsed.host, () => resolve()));
  }
}
