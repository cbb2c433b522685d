import * as v from 'valibot';
import { VendorError } from '../../../shared/errors.ts';
import { randomUrlSafe, s256Challenge } from './oidc-pkce.ts';

/**
 * The console's OpenID Connect sign-in (docs/console.md#signing-in-with-openid-connect): the
 * authorization code flow with PKCE S256 for a public client, the token kept in sessionStorage only.
 *
 * The browser's globals come in as arguments (`storage`, `navigate`, `fetch`, the clock), so the same
 * code runs in Node's tests against a real provider.
 */

/** What the console's settings document says about OIDC sign-in (functions/console/oidc-settings.ts). */
export interface OidcSignIn {
  issuer: string;
  clientId: string;
  scopes: string[];
  /** The resource indicator (RFC 8707) the access token is asked for: the API's audience. */
  resource?: string;
}

/** The part of `Storage` used: sessionStorage in the browser. */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface OidcBrowser {
  storage: KeyValueStorage;
  fetch: typeof globalThis.fetch;
  now: () => number;
  navigate: (url: string) => void;
}

/** The tokens of a signed-in user. */
export interface OidcSession {
  accessToken: string;
  idToken?: string;
  /** Epoch milliseconds after which the access token is no longer used. */
  expiresAt: number;
  /** The ID token's `sub`, for showing who is signed in. */
  subject?: string;
}

/** A request sent to the provider and not yet come back. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  /** Where in the console to go once signed in. */
  returnTo: string;
}

export const PENDING_KEY = 'vendor-console.oidc.pending';
export const SESSION_KEY = 'vendor-console.oidc.session';

const metadataSchema = v.looseObject({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  end_session_endpoint: v.optional(v.string()),
  code_challenge_methods_supported: v.optional(v.array(v.string())),
});
export type ProviderMetadata = v.InferOutput<typeof metadataSchema>;

const tokenResponseSchema = v.looseObject({
  access_token: v.pipe(v.string(), v.minLength(1)),
  token_type: v.pipe(v.string(), v.check((t) => t.toLowerCase() === 'bearer')),
  expires_in: v.optional(v.pipe(v.number(), v.minValue(1))),
  /** Always asked for (`openid`), and required: its `nonce` ties the tokens to this sign-in. */
  id_token: v.string(),
});

const idTokenClaimsSchema = v.looseObject({
  iss: v.string(),
  aud: v.union([v.string(), v.array(v.string())]),
  sub: v.string(),
  nonce: v.optional(v.string()),
});

const pendingSchema = v.object({ state: v.string(), nonce: v.string(), verifier: v.string(), redirectUri: v.string(), returnTo: v.string() });
const sessionSchema = v.object({ accessToken: v.string(), idToken: v.optional(v.string()), expiresAt: v.number(), subject: v.optional(v.string()) });

/** Used when the provider gives no `expires_in`: short, so an unknown lifetime never outlives the real one by much. */
const DEFAULT_TOKEN_LIFETIME_MS = 300_000;

function signInError(message: string, cause?: unknown): VendorError {
  return new VendorError('unauthenticated', `OpenID Connect sign-in failed: ${message}`, { cause });
}

/** The provider's discovery document (OIDC Discovery 4), which must name the configured issuer. */
export async function discover(issuer: string, fetchFn: typeof globalThis.fetch): Promise<ProviderMetadata> {
  const res = await fetchFn(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
  if (!res.ok) throw signInError(`the provider's discovery document answered ${res.status}`);
  const parsed = v.safeParse(metadataSchema, await res.json());
  if (!parsed.success) throw signInError("the provider's discovery document lacks its endpoints");
  if (parsed.output.issuer !== issuer) throw signInError('the discovery document names another issuer');
  const methods = parsed.output.code_challenge_methods_supported;
  if (methods !== undefined && !methods.includes('S256')) throw signInError('the provider does not offer PKCE S256');
  return parsed.output;
}

/** The authorization request (OIDC Core 3.1.2.1 with PKCE and, when set, RFC 8707's `resource`). */
export function authorizationUrl(
  metadata: ProviderMetadata,
  settings: OidcSignIn,
  request: { redirectUri: string; state: string; nonce: string; challenge: string },
): string {
  const url = new URL(metadata.authorization_endpoint);
  const scopes = settings.scopes.includes('openid') ? settings.scopes : ['openid', ...settings.scopes];
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', request.redirectUri);
  url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', request.state);
  url.searchParams.set('nonce', request.nonce);
  url.searchParams.set('code_challenge', request.challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (settings.resource !== undefined) url.searchParams.set('resource', settings.resource);
  return url.href;
}

/** Starts a sign-in: keeps `state`, `nonce` and the PKCE verifier in storage and goes to the provider. */
export async function beginSignIn(settings: OidcSignIn, browser: OidcBrowser, redirectUri: string, returnTo = '/'): Promise<void> {
  const metadata = await discover(settings.issuer, browser.fetch);
  const pending: PendingSignIn = { state: randomUrlSafe(), nonce: randomUrlSafe(), verifier: randomUrlSafe(), redirectUri, returnTo };
  browser.storage.setItem(PENDING_KEY, JSON.stringify(pending));
  browser.navigate(authorizationUrl(metadata, settings, { ...pending, challenge: await s256Challenge(pending.verifier) }));
}

function readJson<T>(storage: KeyValueStorage, key: string, schema: v.GenericSchema<unknown, T>): T | undefined {
  const raw = storage.getItem(key);
  if (raw === null) return undefined;
  try {
    const parsed = v.safeParse(schema, JSON.parse(raw));
    if (parsed.success) return parsed.output;
  } catch {
    // Not JSON: dropped below like any unreadable entry.
  }
  storage.removeItem(key);
  return undefined;
}

/** The claims of a JWT, unverified: only for checks the token endpoint's TLS already vouches for. */
export function unverifiedClaims(jwt: string): unknown {
  const payload = jwt.split('.')[1];
  if (payload === undefined) throw signInError('the ID token is not a JWT');
  const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
  try {
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))));
  } catch (cause) {
    throw signInError('the ID token is not a JWT', cause);
  }
}

/**
 * The ID token came straight from the token endpoint over TLS, so its signature need not be checked
 * (OIDC Core 3.1.3.7, item 6); its issuer, audience and `nonce` must still match this request.
 */
function checkIdToken(idToken: string, settings: OidcSignIn, nonce: string): string {
  const parsed = v.safeParse(idTokenClaimsSchema, unverifiedClaims(idToken));
  if (!parsed.success) throw signInError('the ID token lacks iss, aud or sub');
  const claims = parsed.output;
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (claims.iss !== settings.issuer) throw signInError('the ID token names another issuer');
  if (!audiences.includes(settings.clientId)) throw signInError('the ID token is for another client');
  if (claims.nonce !== nonce) throw signInError('the ID token does not carry the nonce of this sign-in');
  return claims.sub;
}

/**
 * Completes a sign-in on the redirect URI: checks `state`, exchanges the code with the PKCE verifier,
 * keeps the tokens in storage and returns them with where in the console to go. The pending request is
 * removed whatever happens, so a code or state is never used twice.
 */
export async function completeSignIn(settings: OidcSignIn, browser: OidcBrowser, callbackUrl: string): Promise<{ session: OidcSession; returnTo: string }> {
  const pending = readJson(browser.storage, PENDING_KEY, pendingSchema);
  browser.storage.removeItem(PENDING_KEY);
  const params = new URL(callbackUrl).searchParams;
  if (pending === undefined) throw signInError('no sign-in was started in this tab');
  if (params.get('state') !== pending.state) throw signInError('the answer does not belong to the sign-in started here (state differs)');
  const error = params.get('error');
  if (error !== null) throw signInError(`the provider answered ${error}${params.get('error_description') ? `: ${params.get('error_description')}` : ''}`);
  const code = params.get('code');
  if (code === null) throw signInError('the provider sent no code');
  const metadata = await discover(settings.issuer, browser.fetch);
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri, client_id: settings.clientId, code_verifier: pending.verifier });
  if (settings.resource !== undefined) body.set('resource', settings.resource);
  const res = await browser.fetch(metadata.token_endpoint, { method: 'POST', body, headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' } });
  const json: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const reason = typeof json === 'object' && json !== null && typeof (json as { error?: unknown }).error === 'string' ? (json as { error: string }).error : String(res.status);
    throw signInError(`the token endpoint refused the code (${reason})`);
  }
  const tokens = v.safeParse(tokenResponseSchema, json);
  if (!tokens.success) throw signInError('the token endpoint answered without a bearer access token and an ID token');
  const subject = checkIdToken(tokens.output.id_token, settings, pending.nonce);
  const session: OidcSession = {
    accessToken: tokens.output.access_token,
    expiresAt: browser.now() + (tokens.output.expires_in === undefined ? DEFAULT_TOKEN_LIFETIME_MS : tokens.output.expires_in * 1000),
    idToken: tokens.output.id_token,
    subject,
  };
  browser.storage.setItem(SESSION_KEY, JSON.stringify(session));
  return { session, returnTo: pending.returnTo };
}

/** Whether a URL is the answer to an authorization request (it carries `state` with `code` or `error`). */
export function isCallback(url: string): boolean {
  const params = new URL(url).searchParams;
  return params.has('state') && (params.has('code') || params.has('error'));
}

/** The signed-in session, or undefined when there is none or its token has expired (which is then dropped). */
export function currentSession(storage: KeyValueStorage, now: number): OidcSession | undefined {
  const session = readJson(storage, SESSION_KEY, sessionSchema);
  if (session === undefined) return undefined;
  if (now >= session.expiresAt) {
    storage.removeItem(SESSION_KEY);
    return undefined;
  }
  return session;
}

/**
 * Signs out: the tokens leave storage at once, then the provider's end-session endpoint (OIDC
 * RP-Initiated Logout) ends its session too when it offers one; otherwise the console goes to
 * `postLogoutRedirectUri` itself.
 */
export async function signOut(settings: OidcSignIn, browser: OidcBrowser, postLogoutRedirectUri: string): Promise<void> {
  const session = readJson(browser.storage, SESSION_KEY, sessionSchema);
  browser.storage.removeItem(SESSION_KEY);
  browser.storage.removeItem(PENDING_KEY);
  let endSession: string | undefined;
  try {
    endSession = (await discover(settings.issuer, browser.fetch)).end_session_endpoint;
  } catch {
    // The tokens are gone already; an unreachable provider only keeps its own session.
  }
  if (endSession === undefined) {
    browser.navigate(postLogoutRedirectUri);
    return;
  }
  const url = new URL(endSession);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri);
  if (session?.idToken !== undefined) url.searchParams.set('id_token_hint', session.idToken);
  browser.navigate(url.href);
}
