import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiAuth } from '../auth/authenticator.ts';
import { apiFixture } from '../../test/support/api.ts';
import { TestTables } from '../../test/support/table.ts';
import { memoryStorage, signInByFetch, TestOpenIdProvider } from '../../test/support/oidc-provider.ts';
import { systemClock } from '../../shared/clock.ts';
import { beginSignIn, completeSignIn, currentSession, PENDING_KEY, SESSION_KEY, signOut, unverifiedClaims, type OidcBrowser, type OidcSignIn } from './client/oidc.ts';
import { consoleOidcSignIn } from './oidc-settings.ts';
import type { OidcConfig } from '../../shared/driver-config/api.ts';

/**
 * The console's sign-in module against a real OpenID Provider (oidc-provider), from Node: authorize,
 * the provider's login and consent, the callback, the code exchanged with PKCE, and the API taking the
 * access token with the user's roles.
 */
const REDIRECT = 'http://127.0.0.1:9/ui/';
const tables = new TestTables();
let op: TestOpenIdProvider;
let oidc: OidcConfig;
let settings: OidcSignIn;

beforeAll(async () => {
  await tables.start();
  op = await TestOpenIdProvider.start({
    redirectUris: [REDIRECT],
    users: { manager: ['vendor-admins'], reader: ['team-a-readers'], stranger: [] },
    resources: ['urn:vendor-agent:api', 'urn:other:api'],
  });
  oidc = { issuer: op.url, audience: ['urn:vendor-agent:api'], rolesClaim: 'groups', clockSkewSeconds: 60, jwksMaxAgeSeconds: 600, jwksCooldownSeconds: 30, maxTokenLifetimeSeconds: 86_400, clientId: op.clientId, resource: 'urn:vendor-agent:api' };
  settings = consoleOidcSignIn(oidc) as OidcSignIn;
});
afterAll(async () => {
  await op.close();
  await tables.close();
});

function browser(): OidcBrowser & { storage: ReturnType<typeof memoryStorage>; visited: string[] } {
  const visited: string[] = [];
  return { storage: memoryStorage(), fetch: globalThis.fetch, now: () => Date.now(), navigate: (url) => void visited.push(url), visited };
}

/** Signs `login` in through the provider as the console would, and returns the browser afterwards. */
async function signIn(login: string, signIn: OidcSignIn = settings) {
  const b = browser();
  await beginSignIn(signIn, b, REDIRECT, '/ui/accounts');
  const callback = await signInByFetch(b.visited[0] as string, login, REDIRECT);
  const done = await completeSignIn(signIn, b, callback.href);
  return { b, ...done, callback };
}

async function api() {
  const auth = createApiAuth({ oidc, accountManagerRoles: ['vendor-admins'] }, { production: false, clock: systemClock });
  return apiFixture(tables, [
    { name: 'team-a', permissions: [{ READ: ['team-a-readers'], WRITE: ['team-a-writers'] }] },
    { name: 'team-b', permissions: [{ READ: ['team-b-readers'] }] },
  ], { auth });
}

describe('OIDC sign-in against oidc-provider, from Node', () => {
  it('runs the code flow with PKCE and gets an access token the API takes with the user\'s roles', async () => {
    const { b, session, returnTo, callback } = await signIn('reader');
    const authorize = new URL(b.visited[0] as string);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(callback.searchParams.get('state')).toBe(authorize.searchParams.get('state'));
    expect(returnTo).toBe('/ui/accounts');
    expect(b.storage.entries.has(PENDING_KEY)).toBe(false);
    expect(JSON.parse(b.storage.getItem(SESSION_KEY) as string)).toEqual(session);
    expect(session.subject).toBe('reader');
    expect(unverifiedClaims(session.accessToken)).toMatchObject({ iss: op.url, aud: 'urn:vendor-agent:api', sub: 'reader', groups: ['team-a-readers'] });
    expect(session.expiresAt).toBeGreaterThan(Date.now());

    const f = await api();
    const list = await f.call('GET', '/vendor/accounts', undefined, session.accessToken);
    expect(list.status).toBe(200);
    expect((list.json.items as { name: string }[]).map((a) => a.name)).toEqual(['team-a']);
    expect((await f.call('GET', '/vendor/accounts/team-b', undefined, session.accessToken)).status).toBe(403);
    expect((await f.call('DELETE', '/vendor/accounts/team-a', undefined, session.accessToken)).status).toBe(403);
  });

  it('gives a manager the manager role', async () => {
    const { session } = await signIn('manager');
    const f = await api();
    const list = await f.call('GET', '/vendor/accounts', undefined, session.accessToken);
    expect((list.json.items as { name: string }[]).map((a) => a.name)).toEqual(['team-a', 'team-b']);
  });

  it('puts the roles where a dot-path roles claim says, and the API finds them there', async () => {
    const nested = await TestOpenIdProvider.start({ redirectUris: [REDIRECT], users: { manager: ['vendor-admins'] }, resources: ['urn:vendor-agent:api'], rolesClaim: 'realm_access.roles' });
    try {
      const config: OidcConfig = { ...oidc, issuer: nested.url, rolesClaim: 'realm_access.roles' };
      const { session } = await signIn('manager', consoleOidcSignIn(config) as OidcSignIn);
      expect(unverifiedClaims(session.accessToken)).toMatchObject({ realm_access: { roles: ['vendor-admins'] } });
      const auth = createApiAuth({ oidc: config, accountManagerRoles: ['vendor-admins'] }, { production: false, clock: systemClock });
      const f = await apiFixture(tables, [{ name: 'team-a', permissions: [{ READ: ['team-a-readers'] }] }], { auth });
      expect((await f.call('GET', '/vendor/accounts/team-a', undefined, session.accessToken)).status).toBe(200);
    } finally {
      await nested.close();
    }
  });

  it('gets a token the API refuses when the console asks for another audience', async () => {
    const { session } = await signIn('manager', { ...settings, resource: 'urn:other:api' });
    expect(unverifiedClaims(session.accessToken)).toMatchObject({ aud: 'urn:other:api' });
    const f = await api();
    expect((await f.call('GET', '/vendor/accounts', undefined, session.accessToken)).status).toBe(401);
  });

  it('cannot exchange a code without the PKCE verifier of its request, nor twice', async () => {
    const b = browser();
    await beginSignIn(settings, b, REDIRECT);
    const pending = b.storage.getItem(PENDING_KEY) as string;
    const callback = await signInByFetch(b.visited[0] as string, 'reader', REDIRECT);
    b.storage.setItem(PENDING_KEY, JSON.stringify({ ...JSON.parse(pending), verifier: 'x'.repeat(43) }));
    await expect(completeSignIn(settings, b, callback.href)).rejects.toThrow(/token endpoint refused the code \(invalid_grant\)/);
    expect(b.storage.entries.has(SESSION_KEY)).toBe(false);
    b.storage.setItem(PENDING_KEY, pending);
    expect((await completeSignIn(settings, b, callback.href)).session.subject).toBe('reader');
    b.storage.setItem(PENDING_KEY, pending);
    await expect(completeSignIn(settings, b, callback.href)).rejects.toThrow(/invalid_grant/);
  });

  it('refuses an ID token that does not carry the nonce of this sign-in', async () => {
    const b = browser();
    await beginSignIn(settings, b, REDIRECT);
    const callback = await signInByFetch(b.visited[0] as string, 'reader', REDIRECT);
    b.storage.setItem(PENDING_KEY, JSON.stringify({ ...JSON.parse(b.storage.getItem(PENDING_KEY) as string), nonce: 'another' }));
    await expect(completeSignIn(settings, b, callback.href)).rejects.toThrow(/nonce/);
    expect(b.storage.entries.has(SESSION_KEY)).toBe(false);
  });

  it('sends the user back to sign-in once the token has expired', async () => {
    const { b, session } = await signIn('reader');
    expect(currentSession(b.storage, session.expiresAt - 1)?.accessToken).toBe(session.accessToken);
    expect(currentSession(b.storage, session.expiresAt)).toBeUndefined();
    expect(b.storage.entries.has(SESSION_KEY)).toBe(false);
  });

  it("signs out: the tokens leave storage and the provider's end-session endpoint is called with the ID token", async () => {
    const { b, session } = await signIn('reader');
    b.visited.length = 0;
    await signOut(settings, b, REDIRECT);
    expect(b.storage.entries.size).toBe(0);
    const endSession = new URL(b.visited[0] as string);
    expect(endSession.origin).toBe(op.url);
    expect(endSession.searchParams.get('id_token_hint')).toBe(session.idToken);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(REDIRECT);
    expect((await fetch(endSession, { redirect: 'manual' })).status).toBe(200);
  });

  it('answers the token endpoint to the console origin only (CORS)', async () => {
    const discovery = (await (await fetch(`${op.url}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const preflight = (origin: string) =>
      fetch(discovery.token_endpoint, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect((await preflight('http://127.0.0.1:9')).headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
    const other = await fetch(discovery.token_endpoint, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&client_id=vendor-console' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
