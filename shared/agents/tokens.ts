/**
 * Agent tokens issued for an identity: `vat_<tokenId>_<secret>`. The id names the token's item in
 * the table, so checking a token is one read; the secret is 256 random bits; only the SHA-256 digest
 * of the whole token is stored, and digests are compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'vat_';
const TOKEN_ID_BYTES = 9;
const SECRET_BYTES = 32;
/** `vat_`, 12 base64url characters of id, `_`, 43 of secret. */
const TOKEN_PATTERN = /^vat_([A-Za-z0-9_-]{12})_([A-Za-z0-9_-]{43})$/;
const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{12}$/;
/** `sha256:` and 64 hex digits: how `vendor-driver.yml` may name a token without holding it. */
const DIGEST_FORM = /^sha256:([0-9a-f]{64})$/;

export interface IssuedToken {
  tokenId: string;
  /** The token itself: shown once, never stored. */
  token: string;
  /** Hex SHA-256 of `token`: what is stored. */
  digest: string;
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function issueToken(): IssuedToken {
  // base64url of 9 bytes is 12 characters and of 32 bytes 43, with no padding.
  const tokenId = randomBytes(TOKEN_ID_BYTES).toString('base64url');
  const token = `${TOKEN_PREFIX}${tokenId}_${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { tokenId, token, digest: tokenDigest(token) };
}

/** The id of an issued token, or undefined when `token` does not have the form of one. */
export function issuedTokenId(token: string): string | undefined {
  return TOKEN_PATTERN.exec(token)?.[1];
}

export function isTokenId(value: string): boolean {
  return TOKEN_ID_PATTERN.test(value);
}

/** The hex digest a `sha256:<hex>` entry names, or undefined when the entry is a token itself. */
export function digestForm(entry: string): string | undefined {
  return DIGEST_FORM.exec(entry)?.[1];
}

/** Whether two hex digests are equal, in time that does not depend on where they differ. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
