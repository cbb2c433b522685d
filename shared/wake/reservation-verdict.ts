/**
 * What became of a reservation (shared/wake/reserve-ask.ts), told by the API to the replica that
 * made it in one UDP datagram on the wake port (docs/protocol.md#reservations): `stored` once the
 * operation's put holding the hand-out has won (send it to the agent now), `release` when the put
 * lost or failed, or the API stored the operation queued instead. Signed like a wake, with its own
 * version prefix; it names the operation and the nonce of the ask that made the reservation, so it
 * acts only on that reservation:
 *
 *     vrv1 <stored|release> <operation id> <ask nonce: 32 hex> <ms since the epoch> <nonce: 32 hex> <signature: 64 hex>
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const RESERVATION_VERDICTS = ['stored', 'release'] as const;
export type ReservationVerdictKind = (typeof RESERVATION_VERDICTS)[number];

const VERSION = 'vrv1';
const SHAPE = /^vrv1 (stored|release) ([0-9a-f]{32}) ([0-9a-f]{32}) (\d{1,15}) ([0-9a-f]{32}) ([0-9a-f]{64})$/;
/** Every verdict is this long or shorter; a longer datagram is not one. */
const MAX_VERDICT_BYTES = 256;

export interface ReservationVerdict {
  verdict: ReservationVerdictKind;
  operationId: string;
  /** The nonce of the reservation ask it answers. */
  askNonce: string;
  at: number;
  nonce: string;
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** The signed datagram telling the replica `verdict` about operation `id`, reserved by the ask with nonce `askNonce`. */
export function encodeReservationVerdict(secret: string, verdict: ReservationVerdictKind, id: string, askNonce: string, now: number, nonce: string = randomBytes(16).toString('hex')): Buffer {
  const body = `${VERSION} ${verdict} ${id} ${askNonce} ${Math.floor(now)} ${nonce}`;
  return Buffer.from(`${body} ${sign(secret, body)}`, 'latin1');
}

/** Whether a datagram claims to be a verdict (its prefix), so the wake endpoint checks it as one. */
export function isReservationVerdict(datagram: Buffer): boolean {
  return datagram.length <= MAX_VERDICT_BYTES && datagram.subarray(0, VERSION.length + 1).toString('latin1') === `${VERSION} `;
}

/** The verdict a datagram carries when well formed and signed with `secret`; its age is the caller's to judge. */
export function verifyReservationVerdict(secret: string, datagram: Buffer): ReservationVerdict | 'malformed' | 'forged' {
  if (datagram.length > MAX_VERDICT_BYTES) return 'malformed';
  const text = datagram.toString('latin1');
  const match = SHAPE.exec(text);
  if (match === null) return 'malformed';
  const [, verdict, operationId, askNonce, at, nonce, signature] = match as unknown as [string, ReservationVerdictKind, string, string, string, string, string];
  const expected = Buffer.from(sign(secret, text.slice(0, text.length - 65)), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'forged';
  return { verdict, operationId, askNonce, at: Number(at), nonce };
}
