/**
 * A reservation ask: the API, about to store an operation, asks a driver replica holding a live
 * session of one of the account's agents to set that agent aside for it, so the operation is stored
 * already handed out (docs/protocol.md#reservations). An HTTP POST to the replica's wake port over TCP,
 * signed with HMAC-SHA256 under the wake secret with the time it was made and a nonce, as a result
 * ask is; the header:
 *
 *     Vendor-Reserve-Ask: vrs1 <operation id> <account> <ms since the epoch> <nonce: 32 hex> <signature: 64 hex>
 *
 * The signature covers the line before it and the body (`"<line>\n<body>"`): the body is the
 * operation as the API will store it, without its hand-out (`ReservedOperation`), so the replica can
 * send it without reading the table. The `vrs1` prefix keeps no other message's signature passing
 * for an ask's. The answer, 200 when an agent is set aside, carries the hand-out as JSON, signed
 * together with the whole ask line:
 *
 *     Vendor-Reserve-Answer: vrsa1 <signature: 64 hex over "vrsa1\n<the ask line>\n<body>">
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import type { Dispatch } from '../operations/model.ts';
import { MAX_MANIFESTS, MAX_TARGETS, MAX_TIMEOUT_SECONDS, OPERATION_ACTIONS } from '../operations/request.ts';
import { signedJsonBody } from './signed-json.ts';

export const RESERVE_ASK_HEADER = 'vendor-reserve-ask';
export const RESERVE_ANSWER_HEADER = 'vendor-reserve-answer';
/** The path the ask is posted to, beside the result asks' `/v1/finished`. */
export const RESERVE_ASK_PATH = '/v1/reserve';
/** An agent was set aside: the body is its hand-out. */
export const RESERVED = 200;
/** No agent connected to the replica holds the account. */
export const NOT_RESERVED = 204;
/** An ask line longer than this is not one. */
export const MAX_RESERVE_ASK_BYTES = 600;
/**
 * A body longer than this is not read. Only requests stored inline (at most 4 KB compressed) are
 * reserved: their base64 and the operation's fields stay well under it.
 */
export const MAX_RESERVE_BODY_BYTES = 16 * 1024;
/** An answer longer than this is not believed. */
export const MAX_RESERVE_ANSWER_BYTES = 2048;

const VERSION = 'vrs1';
const ANSWER_VERSION = 'vrsa1';
// Operation ids are 32 hex digits; account names as the accounts' schema allows them.
const SHAPE = /^vrs1 ([0-9a-f]{32}) ([A-Za-z0-9._-]{1,253}) (\d{1,15}) ([0-9a-f]{32}) ([0-9a-f]{64})$/;
const ANSWER_SHAPE = /^vrsa1 ([0-9a-f]{64})$/;

/**
 * Whole numbers up to `max`. Every number is bounded: a time past the safe integers, or a time-out
 * past the longest an operation may have, is no operation the API stores, and handed to an agent it
 * ends the agent's stream.
 */
const upTo = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max));
const time = upTo(Number.MAX_SAFE_INTEGER);

/**
 * The operation as the API will store it, less its hand-out: the fields `newOperationRecord` makes
 * the record from, and the request compressed as stored (base64), so the replica makes the very
 * record the API stores and sends its request.
 */
export const reservedOperationSchema = v.strictObject({
  account: v.pipe(v.string(), v.maxLength(253)),
  submittedBy: v.pipe(v.string(), v.maxLength(1024)),
  idempotencyKey: v.pipe(v.string(), v.maxLength(255)),
  requestHash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  record: v.strictObject({ action: v.picklist(OPERATION_ACTIONS), objects: upTo(Math.max(MAX_MANIFESTS, MAX_TARGETS)), timeoutMs: v.optional(upTo(MAX_TIMEOUT_SECONDS * 1000)) }),
  now: time,
  request: v.pipe(v.string(), v.base64(), v.maxLength(MAX_RESERVE_BODY_BYTES)),
});
export type ReservedOperation = v.InferOutput<typeof reservedOperationSchema>;

const dispatchSchema = v.strictObject({
  agentId: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  sessionId: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  replicaId: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  at: time,
});

function hmac(secret: string, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest();
}

function signAsk(secret: string, line: string, body: string): Buffer {
  return hmac(secret, `${line}\n${body}`);
}

/** The signed ask line for operation `id` of `account`, made at `now`, carrying `body`. */
export function encodeReserveAsk(secret: string, id: string, account: string, now: number, body: string, nonce: string = randomBytes(16).toString('hex')): string {
  const line = `${VERSION} ${id} ${account} ${Math.floor(now)} ${nonce}`;
  return `${line} ${signAsk(secret, line, body).toString('hex')}`;
}

export interface VerifiedReserveAsk {
  operationId: string;
  account: string;
  at: number;
  nonce: string;
  operation: ReservedOperation;
}

/**
 * The ask a header and body carry when well formed and signed with `secret`, and the body is the
 * operation the line names; its age is the caller's to judge.
 */
export function verifyReserveAsk(secret: string, header: string | undefined, body: string, idOf: (op: ReservedOperation) => string): VerifiedReserveAsk | 'malformed' | 'forged' {
  if (header === undefined || header.length > MAX_RESERVE_ASK_BYTES || body.length > MAX_RESERVE_BODY_BYTES) return 'malformed';
  const match = SHAPE.exec(header);
  if (match === null) return 'malformed';
  const [, operationId, account, at, nonce, signature] = match as unknown as [string, string, string, string, string, string];
  if (!timingSafeEqual(signAsk(secret, header.slice(0, header.length - 65), body), Buffer.from(signature, 'hex'))) return 'forged';
  const operation = signedJsonBody(reservedOperationSchema, body);
  if (operation === undefined || operation.account !== account || idOf(operation) !== operationId) return 'malformed';
  return { operationId, account, at: Number(at), nonce, operation };
}

/** The `Vendor-Reserve-Answer` header for `body` answering the ask whose line was `ask`. */
export function signReserveAnswer(secret: string, ask: string, body: string): string {
  return `${ANSWER_VERSION} ${hmac(secret, `${ANSWER_VERSION}\n${ask}\n${body}`).toString('hex')}`;
}

/** The hand-out an answer carries, when `signature` signs `body` as the answer to the ask `ask`; else undefined. */
export function believedReservation(secret: string, ask: string, signature: string | undefined, body: string): Dispatch | undefined {
  const match = signature === undefined ? null : ANSWER_SHAPE.exec(signature);
  if (match === null || body.length > MAX_RESERVE_ANSWER_BYTES) return undefined;
  if (!timingSafeEqual(hmac(secret, `${ANSWER_VERSION}\n${ask}\n${body}`), Buffer.from(match[1] as string, 'hex'))) return undefined;
  return signedJsonBody(dispatchSchema, body);
}
