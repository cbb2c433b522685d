import { describe, expect, it } from 'vitest';
import { digestForm, issueToken, issuedTokenId, isTokenId, sameDigest, tokenDigest } from './tokens.ts';

describe('issued agent tokens', () => {
  it('carry their id, 256 random bits, and are stored as their SHA-256 digest', () => {
    const a = issueToken();
    const b = issueToken();
    expect(a.token).toMatch(/^vat_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
    expect(issuedTokenId(a.token)).toBe(a.tokenId);
    expect(isTokenId(a.tokenId)).toBe(true);
    expect(a.digest).toBe(tokenDigest(a.token));
    expect(a.digest).not.toContain(a.token.slice(17));
    expect(a.token).not.toBe(b.token);
    expect(a.tokenId).not.toBe(b.tokenId);
  });

  it('tells issued tokens from others only by their form', () => {
    expect(issuedTokenId('vat_short_x')).toBeUndefined();
    expect(issuedTokenId('a-fleet-token-of-enough-length')).toBeUndefined();
    expect(isTokenId('../../etc')).toBe(false);
  });

  it('compares digests whole, and reads the sha256: form of the driver file', () => {
    const d = tokenDigest('x');
    expect(sameDigest(d, d)).toBe(true);
    expect(sameDigest(d, tokenDigest('y'))).toBe(false);
    expect(sameDigest(d, d.slice(0, 62))).toBe(false);
    expect(digestForm(`sha256:${d}`)).toBe(d);
    expect(digestForm(`sha256:${d.toUpperCase()}`)).toBeUndefined();
    expect(digestForm(d)).toBeUndefined();
  });
});
