/**
 * The reservations a replica made for the API in another process (docs/protocol.md#reservations): an
 * agent of this replica set aside by the dispatcher (`reserve`) for an operation the API is about to
 * store handed out to it, kept with the record and request the ask carried until the API's verdict
 * comes. `stored` sends it to the agent at once (attempt 1, no claim: the API's put holds the hand-out);
 * `release` or a named wake for the id (the API stored it queued) frees the agent. A hold that ends
 * without either reads the operation: stored handed out with this reservation (its `stored` was
 * lost), it is sent as `stored` would have; else the agent is freed. Without that read, a released
 * reservation whose operation was stored anyway is the pass's to send: its entry names this replica on
 * an open stream with no record of sending it (the entry the store may have failed to write).
 */
import type { Clock } from '../../shared/clock.ts';
import type { Dispatch, OperationRecord } from '../../shared/operations/model.ts';
import type { OperationReservation } from '../../shared/operations/events.ts';
import { requestHash } from '../../shared/operations/hash.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import type { OperationRequest } from '../../shared/operations/request.ts';
import { decompress, MAX_INLINE_REQUEST_JSON_BYTES, newOperationRecord, storedApart } from '../../shared/table/operations/operations.ts';
import type { ReservedOperation, VerifiedReserveAsk } from '../../shared/wake/reserve-ask.ts';
import type { ReservationVerdict } from '../../shared/wake/reservation-verdict.ts';

/**
 * How long a reservation waits for the API's verdict before it frees its agent: well past a store's
 * round trip (the API sends `stored` right after its put wins), short enough that a lost verdict
 * delays the operation by little more than a pass.
 */
export const RESERVATION_HOLD_MS = 2_000;

/** What came of an ask or a verdict, counted in `vendor_driver_reservations_total`. */
export type ReservationOutcome = 'reserved' | 'not_held' | 'handed_out' | 'released' | 'expired' | 'found_stored' | 'unknown';

export interface HeldReservationsOptions {
  /** The dispatcher's reservation (OperationEvents.reserve): undefined when no agent here holds the account. */
  reserve(id: string, account: string, now: number): OperationReservation | undefined;
  clock: Clock;
  holdMs?: number;
  counted?(outcome: ReservationOutcome): void;
  /** The operation as the table holds it (undefined when there is none), read when a hold ends without a verdict. */
  readStored?(id: string): Promise<OperationRecord | undefined>;
}

/** Whether `stored` is the operation put with the hand-out of `reserved`, and still at it. */
function storedWith(stored: OperationRecord | undefined, reserved: OperationRecord): stored is OperationRecord {
  const [s, r] = [stored?.dispatch, reserved.dispatch];
  return stored?.state === 'RUNNING' && stored.attempt === 1 && s !== undefined && r !== undefined && s.endedAt === undefined && s.sessionId === r.sessionId && s.agentId === r.agentId && s.at === r.at;
}

interface Held {
  askNonce: string;
  reservation: OperationReservation;
  record: OperationRecord;
  request: OperationRequest;
  hold: AbortController;
}

/**
 * The request an ask carries, when it is the one the operation's hash names (the hash the API made of
 * the request it stores) and of the action its record says; else undefined. The agent is sent this
 * copy while the table keeps the API's, so the two must be one request. The API reserves only
 * requests it keeps inline, so a larger one is no ask of its, and is not decompressed at all.
 */
function carriedRequest(operation: ReservedOperation, bytes: Buffer): OperationRequest | undefined {
  if (storedApart(bytes)) return undefined;
  let request: unknown;
  try {
    request = decompress<unknown>(bytes, MAX_INLINE_REQUEST_JSON_BYTES);
  } catch {
    return undefined;
  }
  if (request === null || typeof request !== 'object' || Array.isArray(request) || (request as { action?: unknown }).action !== operation.record.action) return undefined;
  return requestHash(operation.account, request) === operation.requestHash ? (request as OperationRequest) : undefined;
}

export class HeldReservations {
  readonly #options: HeldReservationsOptions;
  readonly #held = new Map<string, Held>();

  constructor(options: HeldReservationsOptions) {
    this.#options = options;
  }

  /** Reservations waiting for their verdict. */
  get size(): number {
    return this.#held.size;
  }

  /**
   * Sets an agent aside for the operation of a verified ask: its hand-out, or undefined when no agent
   * here holds the account (or the id is being decided here already). `malformed` when the request
   * the ask carries cannot be read, or is not the one its hash and action name.
   */
  take(ask: VerifiedReserveAsk): Dispatch | undefined | 'malformed' {
    const { operation } = ask;
    const bytes = Buffer.from(operation.request, 'base64');
    const request = carriedRequest(operation, bytes);
    if (request === undefined) return 'malformed';
    if (this.#held.has(ask.operationId)) return this.#counted('not_held', undefined);
    const reservation = this.#options.reserve(ask.operationId, ask.account, operation.now);
    if (reservation === undefined) return this.#counted('not_held', undefined);
    // The very record the API stores with this hand-out.
    const record = newOperationRecord({ ...operation, request: bytes, dispatch: reservation.dispatch });
    const hold = new AbortController();
    this.#held.set(ask.operationId, { askNonce: ask.nonce, reservation, record, request, hold });
    this.#options.clock
      .sleep(this.#options.holdMs ?? RESERVATION_HOLD_MS, hold.signal)
      .then(() => this.#settle(ask.operationId, 'expired'))
      .catch(() => undefined);
    return this.#counted('reserved', reservation.dispatch);
  }

  /** The API's verdict on a reservation; one for no reservation held here (or another ask's) changes nothing. */
  verdict(v: ReservationVerdict): void {
    const held = this.#held.get(v.operationId);
    if (held === undefined || held.askNonce !== v.askNonce) {
      this.#options.counted?.('unknown');
      return;
    }
    if (v.verdict === 'stored') pathTrace?.('replica.stored_received', v.operationId);
    this.#settle(v.operationId, v.verdict === 'stored' ? 'handed_out' : 'released');
  }

  /** A named wake for `id`: the API stored it queued, so its claim must not find it held back here. */
  releaseFor(id: string): void {
    if (this.#held.has(id)) this.#settle(id, 'released');
  }

  /** Frees every agent held (the replica stops). */
  close(): void {
    for (const id of [...this.#held.keys()]) this.#settle(id, 'released');
  }

  #settle(id: string, outcome: 'handed_out' | 'released' | 'expired'): void {
    const held = this.#held.get(id);
    if (held === undefined) return;
    this.#held.delete(id);
    held.hold.abort();
    const { readStored } = this.#options;
    if (outcome === 'expired' && readStored !== undefined) {
      // The agent stays set aside (the dispatcher keeps the id as being decided) until the read answers.
      void readStored(id)
        .catch(() => undefined)
        .then((stored) => {
          if (!storedWith(stored, held.record)) return this.#release(held, 'expired');
          this.#options.counted?.('found_stored');
          held.reservation.handOut({ record: stored, request: held.request });
        });
      return;
    }
    if (outcome !== 'handed_out') return this.#release(held, outcome);
    this.#options.counted?.(outcome);
    held.reservation.handOut({ record: held.record, request: held.request });
  }

  #release(held: Held, outcome: 'released' | 'expired'): void {
    this.#options.counted?.(outcome);
    held.reservation.release();
  }

  #counted<T>(outcome: ReservationOutcome, value: T): T {
    this.#options.counted?.(outcome);
    return value;
  }
}
