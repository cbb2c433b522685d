/**
 * A result ask: the API's long-poll to a driver replica, "tell me when operation <id> has finished
 * here, waiting at most <wait> ms" (docs/protocol.md#6b-wakes). Like a wake it carries no state and is
 * signed with HMAC-SHA256 under the wake secret, with the time it was made and a nonce, so a replica
 * refuses forged, stale and replayed ones before it looks at the id. Text, one line, sent as the
 * `Vendor-Result-Ask` header of an HTTP GET to the replica's wake port over TCP:
 *
 *     vr1 <operation id> <wait ms> <ms since the epoch> <nonce: 32 hex> <signature: 64 hex>
 *
 * The signature covers everything before it; the `vr1` prefix keeps a wake's signature from passing
 * for an ask's and the other way round.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const RESULT_ASK_HEADER = 'vendor-result-ask';
/** The path the ask is sent to; anything else is not found. */
export const RESULT_ASK_PATH = '/v1/finished';
/** An ask longer than this is not one: refused before anything is parsed. */
export const MAX_RESULT_ASK_BYTES = 400;
/** The answers: the operation finished through this replica, or it did not within the wait. */
export const RESULT_FINISHED = 200;
export const RESULT_NOT_YET = 204;

const VERSION = 'vr1';
// Operation ids are printable ASCII without spaces (shared/table/operations/operations.ts checks them).
const SHAPE = /^vr1 ([\x21-\x7e]{1,200}) (\d{1,9}) (\d{1,15}) ([0-9a-f]{32}) ([0-9a-f]{64})$/;

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** A signed ask for operation `id`, to be held at most `waitMs`, made at `now`. */
export function encodeResultAsk(secret: string, id: string, waitMs: number, now: number, nonce: string = randomBytes(16).toString('hex')): string {
  const body = `${VERSION} ${id} ${Math.max(0, Math.floor(waitMs))} ${Math.floor(now)} ${nonce}`;
  return `${body} ${sign(secret, body)}`;
}

export interface VerifiedResultAsk {
  operationId: string;
  waitMs: number;
  at: number;
  nonce: string;
}

/** The ask a header carries when it is well formed and signed with `secret`; its age is the caller's to judge. */
export function verifyResultAsk(secret: string, header: string | undefined): VerifiedResultAsk | 'malformed' | 'forged' {
  if (header === undefined || header.length > MAX_RESULT_ASK_BYTES) return 'malformed';
  const match = SHAPE.exec(header);
  if (match === null) return 'malformed';
  const [, operationId, waitMs, at, nonce, signature] = match as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(sign(secret, `${VERSION} ${operationId} ${waitMs} ${at} ${nonce}`), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'forged';
  return { operationId, waitMs: Number(waitMs), at: Number(at), nonce };
}
