/**
 * The replica's answer to the API's reservation asks (docs/protocol.md#reservations), on the result
 * endpoint's port at `/v1/reserve`. Checked as result asks are, in the same order (rate, shape, the
 * body's bound, signature, age, nonce; driver/wake/guard.ts), before anything is reserved; a refused
 * ask gets 403 (429 over the rate) and changes nothing; one whose body does not come whole within
 * RESERVE_BODY_WAIT_MS has its connection closed too. An accepted one gets 200 with the hand-out,
 * signed together with the ask, when an agent here holding the account is set aside, else 204.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import { operationIdOf } from '../../shared/table/operations/operations.ts';
import { MAX_RESERVE_BODY_BYTES, NOT_RESERVED, RESERVE_ANSWER_HEADER, RESERVE_ASK_HEADER, RESERVED, signReserveAnswer, verifyReserveAsk } from '../../shared/wake/reserve-ask.ts';
import { DatagramRate, NonceWindow, type WakeRefusal } from './guard.ts';
import type { HeldReservations } from './reservations.ts';

export type ReserveAskRefusal = 'malformed' | 'forged' | WakeRefusal;

export interface ReserveAskHandlerOptions {
  maxAgeMs: number;
  maxPerSecond: number;
  secret: string;
  clock: Clock;
  log: Logger;
  held: HeldReservations;
  /** Hears every refused ask (the metrics; what came of accepted ones the reservations count). */
  refused?(outcome: ReserveAskRefusal): void;
}

/**
 * How long a reservation ask's body may take to arrive once its header has. The API writes the body
 * with the header and waits 50 ms for the answer, so a body still incomplete after this is not the
 * API's: without the bound, one that stops short would hold its connection until the server's own
 * request timeout.
 */
export const RESERVE_BODY_WAIT_MS = 1_000;

/**
 * The body, read whole within `waitMs`; undefined when it is longer than `max` (declared or sent; not
 * read past that), stops short, fails or does not come in time.
 */
function boundedBody(req: IncomingMessage, max: number, clock: Clock, waitMs: number): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const late = new AbortController();
    const done = (body: string | undefined): void => {
      late.abort();
      req.off('data', onData);
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) return done(undefined);
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => done(Buffer.concat(chunks).toString('utf8')));
    // A body cut short (the connection closed before it was whole) is a refusal like any other.
    req.once('error', () => done(undefined));
    clock.sleep(waitMs, late.signal).then(
      () => done(undefined),
      () => undefined,
    );
  });
}

export function reserveAskHandler(options: ReserveAskHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { secret, clock, log, held } = options;
  const rate = new DatagramRate(options.maxPerSecond, clock.now());
  const nonces = new NonceWindow(options.maxAgeMs, options.maxPerSecond * Math.ceil((options.maxAgeMs * 2) / 1000));
  let refusalsLogged = 0;
  /** `unread`: the body was not read whole, so the connection is closed rather than left to read the rest of it. */
  const refuse = (req: IncomingMessage, res: ServerResponse, outcome: ReserveAskRefusal, unread = false): void => {
    options.refused?.(outcome);
    if (outcome !== 'rate_limited' && refusalsLogged++ < 5) log.warn({ outcome }, 'reservation ask refused');
    req.resume();
    const headers = { 'content-length': '0', 'cache-control': 'no-store', ...(unread ? { connection: 'close' } : {}) };
    if (!res.headersSent) res.writeHead(outcome === 'rate_limited' ? 429 : 403, headers).end();
  };
  return async (req, res) => {
    const now = clock.now();
    if (!rate.take(now)) return refuse(req, res, 'rate_limited');
    const raw = req.headers[RESERVE_ASK_HEADER];
    const header = typeof raw === 'string' ? raw : undefined;
    if (header === undefined || req.method !== 'POST') return refuse(req, res, 'malformed');
    const body = await boundedBody(req, MAX_RESERVE_BODY_BYTES, clock, RESERVE_BODY_WAIT_MS);
    if (body === undefined) return refuse(req, res, 'malformed', true);
    const ask = verifyReserveAsk(secret, header, body, (op) => operationIdOf(op.account, op.submittedBy, op.idempotencyKey));
    if (ask === 'malformed' || ask === 'forged') return refuse(req, res, ask);
    const refusal = nonces.admit(ask.nonce, ask.at, clock.now());
    if (refusal !== undefined) return refuse(req, res, refusal);
    pathTrace?.('replica.reserve_received', ask.operationId);
    const dispatch = held.take(ask);
    if (dispatch === 'malformed') return refuse(req, res, 'malformed');
    if (dispatch === undefined) {
      res.writeHead(NOT_RESERVED, { 'content-length': '0', 'cache-control': 'no-store' }).end();
      return;
    }
    const answer = JSON.stringify(dispatch);
    res
      .writeHead(RESERVED, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(answer)),
        'cache-control': 'no-store',
        [RESERVE_ANSWER_HEADER]: signReserveAnswer(secret, header, answer),
      })
      .end(answer);
  };
}
