/**
 * A wake: one UDP datagram from the API to a driver replica saying "read the work feed, or the
 * operation queue, now" (docs/protocol.md#6b-wakes). It carries no state the replica trusts, only the
 * topic, when it was made and a nonce, signed with HMAC-SHA256 under the secret the API and the
 * drivers share, so a replica can refuse forged ones and, by timestamp and nonce, replayed ones. Text,
 * one line:
 *
 *     vw1 <topic> <ms since the epoch> <nonce: 32 hex> [<operation id> <account> [<request hash>]] <signature: 64 hex>
 *
 *     vw1 accounts <ms since the epoch> <nonce: 32 hex> [<account>] <signature: 64 hex>
 *
 * The signature covers everything before it. An `operations` wake may name the operation just
 * queued: where to look first. The replica claims it with its conditional write, whose condition
 * decides; a name it cannot use sends it to the queue as an unnamed wake does. An `accounts` wake may
 * name the one account a write changed: the replica settles it from its item, read fresh, instead of
 * reading the work feed first; the item decides, as the feed's entry would have had it read.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WAKE_TOPICS = ['accounts', 'operations'] as const;
export type WakeTopic = (typeof WAKE_TOPICS)[number];

const VERSION = 'vw1';
/**
 * Larger datagrams are not wakes: they are dropped before anything is parsed. The longest wake is a
 * named one for a 253-character account with a request hash (481 bytes); 512 stays under the 548
 * bytes of UDP payload every IPv4 host must take without fragments.
 */
export const MAX_WAKE_BYTES = 512;
/** A shared secret shorter than this is too easy to guess. */
export const MIN_WAKE_SECRET_LENGTH = 32;

/** The operation an `operations` wake names: the fields its claim needs (it was queued at attempt 0). */
export interface NamedOperation {
  id: string;
  account: string;
  /** Present when the request is stored apart from the operation, so the claim reads it alongside. */
  requestHash?: string | undefined;
}

const SHAPE = /^vw1 (accounts|operations) (\d{1,15}) ([0-9a-f]{32})(?: ([0-9a-f]{32}) ([A-Za-z0-9._-]{1,253})(?: ([0-9a-f]{64}))?)? ([0-9a-f]{64})$/;
const ACCOUNT_SHAPE = /^vw1 accounts (\d{1,15}) ([0-9a-f]{32}) ([A-Za-z0-9._-]{1,253}) ([0-9a-f]{64})$/;
const NAME_SHAPE = /^(?:[0-9a-f]{32}) (?:[A-Za-z0-9._-]{1,253})(?: [0-9a-f]{64})?$/;
const ACCOUNT_NAME_SHAPE = /^[A-Za-z0-9._-]{1,253}$/;

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

function nameOf(operation: NamedOperation): string | undefined {
  const name = operation.requestHash === undefined ? `${operation.id} ${operation.account}` : `${operation.id} ${operation.account} ${operation.requestHash}`;
  return NAME_SHAPE.test(name) ? name : undefined;
}

/** Whether the signature ending a wake's `text` (its last 64 hex digits) signs everything before the space in front of it. */
function signedWith(secret: string, text: string): boolean {
  const expected = Buffer.from(sign(secret, text.slice(0, -65)), 'hex');
  return timingSafeEqual(expected, Buffer.from(text.slice(-64), 'hex'));
}

/** The words a wake of `topic` names `wakeName` by, or undefined when it cannot name it. */
function nameFor(topic: WakeTopic, wakeName: WakeName): string | undefined {
  if (namesOperation(wakeName)) return topic === 'operations' ? nameOf(wakeName) : undefined;
  return topic === 'accounts' && ACCOUNT_NAME_SHAPE.test(wakeName.account) ? wakeName.account : undefined;
}

/** What a wake names: the operation just queued (`operations`), or the one account a write changed (`accounts`). */
export type WakeName = NamedOperation | { account: string };

/** Whether a wake's name is an operation's (else it is an account's). */
export function namesOperation(name: WakeName): name is NamedOperation {
  return 'id' in name;
}

/**
 * A signed wake for `topic`, made at `now`; naming `wakeName` (an operation for an `operations` wake, an
 * account for an `accounts` wake) when it is well formed and fits the datagram, else without a name.
 */
export function encodeWake(secret: string, topic: WakeTopic, now: number, nonce: string = randomBytes(16).toString('hex'), wakeName?: WakeName): Buffer {
  const plain = `${VERSION} ${topic} ${Math.floor(now)} ${nonce}`;
  const name = wakeName === undefined ? undefined : nameFor(topic, wakeName);
  const named = name === undefined ? undefined : `${plain} ${name}`;
  // 65: the signature and the space before it.
  const body = named !== undefined && Buffer.byteLength(named, 'latin1') + 65 <= MAX_WAKE_BYTES ? named : plain;
  return Buffer.from(`${body} ${sign(secret, body)}`, 'latin1');
}

export interface VerifiedWake {
  topic: WakeTopic;
  at: number;
  nonce: string;
  /** Where to look first (an `operations` wake only); nothing about it is trusted but its shape. */
  operation?: NamedOperation;
  /** The account to settle first (an `accounts` wake only); nothing about it is trusted but its shape. */
  account?: string;
}

/**
 * The wake a datagram carries, when it is well formed and signed with `secret`: `malformed` when it
 * is not a wake at all, `forged` when its signature does not match. Its age is the caller's to judge.
 */
export function verifyWake(secret: string, datagram: Buffer): VerifiedWake | 'malformed' | 'forged' {
  if (datagram.length > MAX_WAKE_BYTES) return 'malformed';
  const text = datagram.toString('latin1');
  const naming = ACCOUNT_SHAPE.exec(text);
  if (naming !== null) {
    if (!signedWith(secret, text)) return 'forged';
    const [, at, nonce, account] = naming as unknown as [string, string, string, string];
    return { topic: 'accounts', at: Number(at), nonce, account };
  }
  const match = SHAPE.exec(text);
  if (match === null) return 'malformed';
  const [, topic, at, nonce, id, account, requestHash] = match as unknown as [string, WakeTopic, string, string, string | undefined, string | undefined, string | undefined];
  if (id !== undefined && topic !== 'operations') return 'malformed';
  if (!signedWith(secret, text)) return 'forged';
  const wake: VerifiedWake = { topic, at: Number(at), nonce };
  if (id !== undefined && account !== undefined) wake.operation = requestHash === undefined ? { id, account } : { id, account, requestHash };
  return wake;
}
