import { describe, expect, it } from 'vitest';
import { encodeWake } from './message.ts';
import { encodeResultAsk, MAX_RESULT_ASK_BYTES, verifyResultAsk } from './result-ask.ts';

const SECRET = 'result-ask-secret-0123456789abcdef0123';

describe('result asks', () => {
  it('round-trips an ask signed with the secret', () => {
    const header = encodeResultAsk(SECRET, 'op-1', 20_000, 1_700_000_000_000, 'ab'.repeat(16));
    expect(verifyResultAsk(SECRET, header)).toEqual({ operationId: 'op-1', waitMs: 20_000, at: 1_700_000_000_000, nonce: 'ab'.repeat(16) });
  });

  it('refuses an ask whose id, wait, time or nonce was changed, or that another secret signed', () => {
    const header = encodeResultAsk(SECRET, 'op-1', 20_000, 1_700_000_000_000, 'ab'.repeat(16));
    for (const [from, to] of [['op-1', 'op-2'], [' 20000 ', ' 60000 '], [' 1700000000000 ', ' 1700000009999 '], ['abab', 'cdcd']] as const) {
      expect(verifyResultAsk(SECRET, header.replace(from, to))).toBe('forged');
    }
    expect(verifyResultAsk('another-secret-0123456789abcdef0123', header)).toBe('forged');
  });

  it('takes no wake for an ask, and nothing malformed or oversized', () => {
    expect(verifyResultAsk(SECRET, encodeWake(SECRET, 'operations', 1_700_000_000_000).toString('latin1'))).toBe('malformed');
    expect(verifyResultAsk(SECRET, undefined)).toBe('malformed');
    expect(verifyResultAsk(SECRET, `vr1 ${'x'.repeat(MAX_RESULT_ASK_BYTES)} 1 1 ${'a'.repeat(32)} ${'b'.repeat(64)}`)).toBe('malformed');
    expect(verifyResultAsk(SECRET, 'vr1 op 1 2 3 4')).toBe('malformed');
  });
});
