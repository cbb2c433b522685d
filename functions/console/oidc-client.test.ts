import { describe, expect, it } from 'vitest';
import { authorizationUrl, completeSignIn, currentSession, isCallback, PENDING_KEY, SESSION_KEY, unverifiedClaims, type OidcBrowser, type ProviderMetadata } from './client/oidc.ts';
import { base64UrlEncode, randomUrlSafe, s256Challenge } from './client/oidc-pkce.ts';
import { memoryStorage } from '../../test/support/oidc-provider.ts';

const metadata: ProviderMetadata = { issuer: 'https://idp.example.com', authorization_endpoint: 'https://idp.example.com/auth?tenant=1', token_endpoint: 'https://idp.example.com/token' };

describe('PKCE', () => {
  it('derives the S256 challenge of RFC 7636 appendix B', async () => {
    expect(await s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes 43-character verifiers of the unreserved alphabet, different every time', () => {
    const made = new Set(Array.from({ length: 50 }, () => randomUrlSafe()));
    expect(made.size).toBe(50);
    for (const v of made) expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(base64UrlEncode(new Uint8Array([251, 255, 191]))).toBe('-_-_');
  });
});

describe('the authorization request', () => {
  it('asks for a code with PKCE S256, state, nonce, openid and the resource', () => {
    const url = new URL(authorizationUrl(metadata, { issuer: metadata.issuer, clientId: 'console', scopes: ['profile'], resource: 'vendor-api' }, { redirectUri: 'https://c.example/ui/', state: 's', nonce: 'n', challenge: 'c' }));
    expect(url.origin + url.pathname).toBe('https://idp.example.com/auth');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: '1',
      response_type: 'code',
      client_id: 'console',
      redirect_uri: 'https://c.example/ui/',
      scope: 'openid profile',
      state: 's',
      nonce: 'n',
      code_challenge: 'c',
      code_challenge_method: 'S256',
      resource: 'vendor-api',
    });
    const bare = new URL(authorizationUrl(metadata, { issuer: metadata.issuer, clientId: 'console', scopes: ['openid'] }, { redirectUri: 'https://c.example/ui/', state: 's', nonce: 'n', challenge: 'c' }));
    expect(bare.searchParams.has('resource')).toBe(false);
    expect(bare.searchParams.get('scope')).toBe('openid');
  });

  it('knows a callback by its state and code or error', () => {
    expect(isCallback('https://c.example/ui/?code=x&state=y')).toBe(true);
    expect(isCallback('https://c.example/ui/?error=access_denied&state=y')).toBe(true);
    expect(isCallback('https://c.example/ui/?code=x')).toBe(false);
    expect(isCallback('https://c.example/ui/accounts')).toBe(false);
  });
});

describe('the callback', () => {
  const settings = { issuer: metadata.issuer, clientId: 'console', scopes: ['openid'] };
  const browser = (storage: ReturnType<typeof memoryStorage>, fetched: string[]): OidcBrowser => ({
    storage,
    now: () => 0,
    navigate: () => undefined,
    fetch: async (input) => {
      fetched.push(String(input));
      return new Response('{}', { status: 500 });
    },
  });

  it('refuses an answer whose state is not the one kept, and contacts nobody', async () => {
    const storage = memoryStorage();
    const fetched: string[] = [];
    storage.setItem(PENDING_KEY, JSON.stringify({ state: 'mine', nonce: 'n', verifier: 'v', redirectUri: 'https://c.example/ui/', returnTo: '/' }));
    await expect(completeSignIn(settings, browser(storage, fetched), 'https://c.example/ui/?code=x&state=theirs')).rejects.toThrow(/state differs/);
    expect(fetched).toEqual([]);
    expect(storage.entries.size).toBe(0);
  });

  it('refuses an answer when no sign-in was started in the tab', async () => {
    const fetched: string[] = [];
    await expect(completeSignIn(settings, browser(memoryStorage(), fetched), 'https://c.example/ui/?code=x&state=s')).rejects.toThrow(/no sign-in was started/);
    expect(fetched).toEqual([]);
  });

  it("reports the provider's error", async () => {
    const storage = memoryStorage();
    storage.setItem(PENDING_KEY, JSON.stringify({ state: 's', nonce: 'n', verifier: 'v', redirectUri: 'https://c.example/ui/', returnTo: '/' }));
    await expect(completeSignIn(settings, browser(storage, []), 'https://c.example/ui/?error=access_denied&state=s')).rejects.toThrow(/access_denied/);
  });
});

describe('the token answer', () => {
  const settings = { issuer: metadata.issuer, clientId: 'console', scopes: ['openid'] };
  const jwt = (claims: object) => `e30.${base64UrlEncode(new TextEncoder().encode(JSON.stringify(claims)))}.sig`;
  /** A provider answering discovery, and `token` at its token endpoint. */
  const answering = (token: object): OidcBrowser & { storage: ReturnType<typeof memoryStorage> } => {
    const storage = memoryStorage();
    storage.setItem(PENDING_KEY, JSON.stringify({ state: 's', nonce: 'n', verifier: 'v', redirectUri: 'https://c.example/ui/', returnTo: '/' }));
    return {
      storage,
      now: () => 1_000,
      navigate: () => undefined,
      fetch: async (input) => new Response(JSON.stringify(String(input).endsWith('/token') ? token : metadata), { headers: { 'content-type': 'application/json' } }),
    };
  };
  const callback = 'https://c.example/ui/?code=c&state=s';
  const idToken = { iss: metadata.issuer, aud: 'console', sub: 'alice', nonce: 'n' };

  it('keeps the access token, the ID token and the expiry of a good answer', async () => {
    const b = answering({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: jwt(idToken) });
    expect((await completeSignIn(settings, b, callback)).session).toEqual({ accessToken: 'at', idToken: jwt(idToken), expiresAt: 61_000, subject: 'alice' });
  });

  for (const [what, token, message] of [
    ['no ID token', { access_token: 'at', token_type: 'Bearer' }, /without a bearer access token and an ID token/],
    ['another token type', { access_token: 'at', token_type: 'DPoP', id_token: jwt(idToken) }, /without a bearer access token/],
    ['an ID token of another issuer', { access_token: 'at', token_type: 'Bearer', id_token: jwt({ ...idToken, iss: 'https://evil.example' }) }, /another issuer/],
    ['an ID token for another client', { access_token: 'at', token_type: 'Bearer', id_token: jwt({ ...idToken, aud: ['other'] }) }, /another client/],
    ['an ID token without the nonce', { access_token: 'at', token_type: 'Bearer', id_token: jwt({ ...idToken, nonce: undefined }) }, /nonce/],
  ] as const) {
    it(`refuses an answer with ${what}, and keeps nothing`, async () => {
      const b = answering(token);
      await expect(completeSignIn(settings, b, callback)).rejects.toThrow(message);
      expect(b.storage.entries.size).toBe(0);
    });
  }
});

describe('the session kept', () => {
  it('is dropped once its token has expired, and when unreadable', () => {
    const storage = memoryStorage();
    storage.setItem(SESSION_KEY, JSON.stringify({ accessToken: 't', expiresAt: 1_000 }));
    expect(currentSession(storage, 999)?.accessToken).toBe('t');
    expect(currentSession(storage, 1_000)).toBeUndefined();
    expect(storage.entries.has(SESSION_KEY)).toBe(false);
    storage.setItem(SESSION_KEY, '{not json');
    expect(currentSession(storage, 0)).toBeUndefined();
    expect(storage.entries.has(SESSION_KEY)).toBe(false);
  });

  it('reads the claims of a JWT without trusting them, and refuses what is not one', () => {
    const jwt = `e30.${base64UrlEncode(new TextEncoder().encode(JSON.stringify({ sub: 'ünï', n: 1 })))}.sig`;
    expect(unverifiedClaims(jwt)).toEqual({ sub: 'ünï', n: 1 });
    expect(() => unverifiedClaims('nodots')).toThrow(/not a JWT/);
  });
});
