/**
 * A wake: one UDP datagram from the API to a driver replica saying "read the work feed, or the
 * operation queue, now" (docs/protocol.md#6b-wakes). It carries no state, only the topic, when it
 * was made and a nonce, signed with HMAC-SHA256 under the secret the API and the drivers share, so a
 * replica can refuse forged ones and, by timestamp and nonce, replayed ones. Text, one line:
 *
 *     vw1 <topic> <ms since the epoch> <nonce: 32 hex> <signature: 64 hex>
 *
 * The signature covers everything before it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WAKE_TOPICS = ['accounts', 'operations'] as const;
export type WakeTopic = (typeof WAKE_TOPICS)[number];

const VERSION = 'vw1';
/** Larger datagrams are not wakes: they are dropped before anything is parsed. */
export const MAX_WAKE_BYTES = 160;
/** A shared secret shorter than this is too easy to guess. */
export const MIN_WAKE_SECRET_LENGTH = 32;

const SHAPE = /^vw1 (accounts|operations) (\d{1,15}) ([0-9a-f]{32}) ([0-9a-f]{64})$/;

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** A signed wake for `topic`, made at `now`. */
export function encodeWake(secret: string, topic: WakeTopic, now: number, nonce: string = randomBytes(16).toString('hex')): Buffer {
  const body = `${VERSION} ${topic} ${Math.floor(now)} ${nonce}`;
  return Buffer.from(`${body} ${sign(secret, body)}`, 'latin1');
}

export interface VerifiedWake {
  topic: WakeTopic;
  at: number;
  nonce: string;
}

/**
 * The wake a datagram carries, when it is well formed and signed with `secret`: `malformed` when it
 * is not a wake at all, `forged` when its signature does not match. Its age is the caller's to judge.
 */
export function verifyWake(secret: string, datagram: Buffer): VerifiedWake | 'malformed' | 'forged' {
  if (datagram.length > MAX_WAKE_BYTES) return 'malformed';
  const match = SHAPE.exec(datagram.toString('latin1'));
  if (match === null) return 'malformed';
  const [, topic, at, nonce, signature] = match as unknown as [string, WakeTopic, string, string, string];
  const expected = Buffer.from(sign(secret, `${VERSION} ${topic} ${at} ${nonce}`), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'forged';
  return { topic, at: Number(at), nonce };
}
