/**
 * The API's side of reservations (docs/protocol.md#reservations): before it stores an operation, the
 * API asks one replica holding a live session of the account's agents to set an agent aside for it,
 * and stores it already handed out to that agent, so no replica has to claim it with a write of its
 * own. Then it tells that replica `stored` (send it now) or `release` in one datagram. An ask that
 * gets no answer it believes within `RESERVE_ANSWER_WAIT_MS` is given up: the operation is stored
 * queued, as without reservations.
 */
import { randomBytes } from 'node:crypto';
import type { Agent } from 'node:http';
import type { OperationReservation } from '../../shared/operations/events.ts';
import type { Dispatch } from '../../shared/operations/model.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import { VendorError } from '../../shared/errors.ts';
import { parseWakeAddress } from '../../shared/wake/address.ts';
import { believedReservation, encodeReserveAsk, MAX_RESERVE_ANSWER_BYTES, RESERVE_ANSWER_HEADER, RESERVE_ASK_HEADER, NOT_RESERVED, RESERVE_ASK_PATH, RESERVED, type ReservedOperation } from '../../shared/wake/reserve-ask.ts';
import { encodeReservationVerdict, type ReservationVerdictKind } from '../../shared/wake/reservation-verdict.ts';
import { replicaConnections, requestReplica, type ReplicaAskOptions } from './replica-request.ts';
import type { WakeTarget } from './target.ts';

/**
 * How long the API waits for a replica's answer before it stores the operation queued. A replica on
 * the same network answers in well under a millisecond; a claim costs one conditional write, a few
 * milliseconds on DynamoDB. Waiting longer than a few claims would cost more than it can save.
 */
export const RESERVE_ANSWER_WAIT_MS = 50;

/** The environment variable that sets the API's wait for a reservation's answer (ms). */
export const RESERVE_WAIT_ENV = 'VENDOR_WAKE_RESERVE_WAIT_MS';
const MAX_RESERVE_WAIT_MS = 10_000;

/**
 * The wait for a reservation's answer the environment sets (`VENDOR_WAKE_RESERVE_WAIT_MS`, 1 to
 * 10,000 ms), or undefined for the default. A network slower than the replicas' usual answer (a
 * Lambda reaching them through a NAT, say) may need more than `RESERVE_ANSWER_WAIT_MS`.
 */
export function reserveWaitFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[RESERVE_WAIT_ENV];
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!/^[0-9]+$/.test(raw) || ms < 1 || ms > MAX_RESERVE_WAIT_MS) {
    throw new VendorError('invalid_input', `${RESERVE_WAIT_ENV} must be a whole number of milliseconds from 1 to ${MAX_RESERVE_WAIT_MS}, not ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return ms;
}

/**
 * How long a replica that refused an ask (403: a replica of an earlier version that does not know
 * the path, or one that does not take this API's signature or clock) is not asked again: its
 * operations are stored queued meanwhile, as they would be after the refusal, without the round trip
 * that only brings the same refusal back. Short, so that a replica upgraded or fixed is asked again
 * soon.
 */
export const REFUSING_REPLICA_SKIPPED_MS = 30_000;

export interface ReserverOptions extends ReplicaAskOptions {
  /** Sends one datagram to a replica's wake address, in the background (WakeSender's socket). */
  tell(datagram: Buffer, address: string): void;
  waitMs?: number;
  /** How long a refusing replica is skipped (`REFUSING_REPLICA_SKIPPED_MS`). */
  skipRefusingMs?: number;
}

/**
 * Which of `n` replicas an operation's reservation is asked of: the same for the same id, and spread
 * evenly over the replicas of the account's agents (ids are hashes), as claims raced for by every
 * replica with a holder spread operations before; asking always the first would hand every operation
 * of a zone to the agents of one replica.
 */
export function spreadIndex(id: string, n: number): number {
  const head = Number.parseInt(id.slice(0, 8), 16);
  return Number.isFinite(head) ? head % n : 0;
}

/**
 * `refused`: 403 or any other status but 429 (an earlier version's replica does not know the path);
 * `busy`: 429, the replica's rate; `broken`: no answer.
 */
type Answer = { dispatch: Dispatch } | 'not_reserved' | 'refused' | 'busy' | 'unbelieved' | 'broken';

const TOO_MANY_REQUESTS = 429;

export class Reserver {
  readonly #options: ReserverOptions;
  readonly #agent: Agent;
  /** Replicas that refused an ask, by address, with when they may be asked again. */
  readonly #refusing = new Map<string, number>();

  constructor(options: ReserverOptions) {
    this.#options = options;
    this.#agent = options.connections ?? replicaConnections();
  }

  close(): void {
    this.#agent.destroy();
  }

  /**
   * An agent set aside for operation `id` (to be stored as `operation` describes) by a replica of
   * `targets`, as a reservation the API settles after its put: `handOut` tells the replica `stored`,
   * `release` tells it `release`. Undefined when no replica answers with one it believes in time.
   * Never rejects.
   */
  async reserve(targets: readonly WakeTarget[], id: string, operation: ReservedOperation): Promise<OperationReservation | undefined> {
    const { clock, secret } = this.#options;
    const addresses = this.#notRefusing(await this.#options.replicas.addresses(targets).catch((): string[] => []), clock.now());
    const address = addresses.length === 0 ? undefined : addresses[spreadIndex(id, addresses.length)];
    const parsed = address === undefined ? undefined : parseWakeAddress(address);
    if (address === undefined || parsed === undefined) return undefined;
    const body = JSON.stringify(operation);
    const askNonce = randomBytes(16).toString('hex');
    const header = encodeReserveAsk(secret, id, operation.account, clock.now(), body, askNonce);
    const tell = (verdict: ReservationVerdictKind) => {
      if (verdict === 'stored') pathTrace?.('api.stored_sent', id);
      this.#options.tell(encodeReservationVerdict(secret, verdict, id, askNonce, clock.now()), address);
    };
    const timeUp = new AbortController();
    const answered = new AbortController();
    clock.sleep(this.#options.waitMs ?? RESERVE_ANSWER_WAIT_MS, answered.signal).then(
      () => timeUp.abort(),
      () => undefined,
    );
    let answer: Answer = 'broken';
    // A kept connection the replica closed while idle fails on its first use: one more try on a new one.
    for (let tries = 0; tries < 2 && answer === 'broken' && !timeUp.signal.aborted; tries++) {
      answer = await this.#ask(parsed, id, header, body, timeUp.signal);
    }
    answered.abort();
    if (answer === 'refused') this.#refusing.set(address, clock.now() + (this.#options.skipRefusingMs ?? REFUSING_REPLICA_SKIPPED_MS));
    if (typeof answer === 'object') {
      let settled = false;
      const once = (verdict: ReservationVerdictKind) => {
        if (settled) return;
        settled = true;
        tell(verdict);
      };
      return { dispatch: answer.dispatch, handOut: () => once('stored'), release: () => once('release') };
    }
    // It may have reserved an agent for an answer that did not come in time or was not believed: free it.
    if (answer === 'unbelieved' || timeUp.signal.aborted) tell('release');
    return undefined;
  }

  /** `addresses` without the replicas skipped for a refusal at `now`; the skips that ended are forgotten. */
  #notRefusing(addresses: readonly string[], now: number): readonly string[] {
    if (this.#refusing.size === 0) return addresses;
    for (const [address, until] of this.#refusing) if (until <= now) this.#refusing.delete(address);
    return addresses.filter((a) => !this.#refusing.has(a));
  }

  async #ask(to: { host: string; port: number }, id: string, header: string, body: string, signal: AbortSignal): Promise<Answer> {
    const answer = await requestReplica({
      ...to,
      path: RESERVE_ASK_PATH,
      method: 'POST',
      headers: { [RESERVE_ASK_HEADER]: header, 'content-type': 'application/json' },
      body,
      agent: this.#agent,
      signal,
      okStatus: RESERVED,
      maxBodyBytes: MAX_RESERVE_ANSWER_BYTES,
      sent: () => pathTrace?.('api.reserve_sent', id),
    });
    if (answer === 'broken') return 'broken';
    if (answer.status !== RESERVED) return answer.status === NOT_RESERVED ? 'not_reserved' : answer.status === TOO_MANY_REQUESTS ? 'busy' : 'refused';
    pathTrace?.('api.reserve_answered', id);
    const signature = answer.headers[RESERVE_ANSWER_HEADER];
    const dispatch = answer.body === 'oversized' || answer.body === undefined ? undefined : believedReservation(this.#options.secret, header, typeof signature === 'string' ? signature : undefined, answer.body);
    return dispatch === undefined ? 'unbelieved' : { dispatch };
  }
}
