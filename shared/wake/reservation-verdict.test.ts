import { describe, expect, it } from 'vitest';
import { encodeWake, verifyWake } from './message.ts';
import { encodeReservationVerdict, isReservationVerdict, verifyReservationVerdict } from './reservation-verdict.ts';

const SECRET = 'verdict-secret-0123456789abcdef0123456';
const ID = '0123456789abcdef0123456789abcdef';
const ASK = 'cd'.repeat(16);
const AT = 1_700_000_000_000;
const NONCE = 'ab'.repeat(16);

describe('reservation verdicts', () => {
  it('round-trips "stored" and "release" signed with the secret', () => {
    for (const verdict of ['stored', 'release'] as const) {
      const datagram = encodeReservationVerdict(SECRET, verdict, ID, ASK, AT, NONCE);
      expect(isReservationVerdict(datagram)).toBe(true);
      expect(verifyReservationVerdict(SECRET, datagram)).toEqual({ verdict, operationId: ID, askNonce: ASK, at: AT, nonce: NONCE });
    }
  });

  it('refuses a verdict whose kind, id, ask, time or nonce was changed, or that another secret signed', () => {
    const text = encodeReservationVerdict(SECRET, 'release', ID, ASK, AT, NONCE).toString('latin1');
    for (const [from, to] of [['release', 'stored'], ['0123456789abcdef01234567', '1123456789abcdef01234567'], ['cdcd', 'efef'], [` ${AT} `, ` ${AT + 1} `], ['abab', 'efef']] as const) {
      expect(verifyReservationVerdict(SECRET, Buffer.from(text.replace(from, to), 'latin1'))).toBe('forged');
    }
    expect(verifyReservationVerdict('another-secret-0123456789abcdef0123456', Buffer.from(text, 'latin1'))).toBe('forged');
  });

  it('is neither a wake nor taken from one', () => {
    const wake = encodeWake(SECRET, 'operations', AT, NONCE, { id: ID, account: 'prod' });
    expect(isReservationVerdict(wake)).toBe(false);
    expect(verifyReservationVerdict(SECRET, wake)).toBe('malformed');
    expect(verifyWake(SECRET, encodeReservationVerdict(SECRET, 'stored', ID, ASK, AT))).toBe('malformed');
    expect(verifyReservationVerdict(SECRET, Buffer.alloc(4096, 0x41))).toBe('malformed');
    expect(verifyReservationVerdict(SECRET, Buffer.from('vrv1 stored x y 1 2 3'))).toBe('malformed');
  });
});
