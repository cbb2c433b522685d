/**
 * PKCE (RFC 7636) with WebCrypto, which browsers and Node both have: a random verifier and its S256
 * challenge, and the random `state` and `nonce` of an authorization request.
 */

/** base64url without padding (RFC 7636 appendix A). */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 32 random bytes as base64url: 43 characters, the shortest verifier RFC 7636 4.1 allows, and 256 bits. */
export function randomUrlSafe(byteLength = 32): string {
  return base64UrlEncode(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 4.2). */
export async function s256Challenge(verifier: string): Promise<string> {
  return base64UrlEncode(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}
