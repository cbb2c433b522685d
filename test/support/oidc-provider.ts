import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type Account, type TokenContext } from 'oidc-provider';

/**
 * A real OpenID Provider on loopback for tests: `oidc-provider` (a certified implementation) with one
 * public client for the console (no secret, PKCE S256 required, authorization code flow only), users
 * whose roles are put in the claim the API reads, and a login and consent page of its own that a
 * browser, or `signInByFetch`, fills in.
 *
 * Tokens for the API: JWT access tokens through resource indicators (RFC 8707). The console asks for
 * the API's audience as `resource`, and the access token carries it as `aud`, with `iss`, `iat`, `exp`
 * and the user's roles: exactly what the API verifies (docs/api.md#tokens). The ID token is not used
 * for the API since its audience is the client id: it says who signed in to the console, not what
 * may call the API, and accepting it would make every token issued to the console's client an API
 * credential whatever the resource asked for.
 */
export interface TestOpenIdProviderOptions {
  /** Redirect URIs of the public client (the console's callback). */
  redirectUris: string[];
  /** Where the end-session endpoint may send the user back to; the redirect URIs when absent. */
  postLogoutRedirectUris?: string[];
  /** Users by login name, with their roles. */
  users: Record<string, string[]>;
  /** The resource indicators (audiences) access tokens may be issued for; the first is the default. */
  resources: string[];
  /** The claim the API reads roles from, a name or dot path (`groups` when absent). */
  rolesClaim?: string;
  /** Browser origins the token and other CORS endpoints answer; the redirect URIs' origins when absent. */
  corsOrigins?: string[];
  clientId?: string;
  /** Lifetime of access tokens (300 s when absent). */
  accessTokenTtlSeconds?: number;
}

/** `{ realm_access: { roles } }` for `realm_access.roles`: the roles where the API looks for them. */
export function rolesClaimValue(path: string, roles: string[]): Record<string, unknown> {
  const names = path.split('.');
  let value: unknown = roles;
  for (const name of names.reverse()) value = { [name]: value };
  return value as Record<string, unknown>;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export class TestOpenIdProvider {
  readonly url: string;
  readonly clientId: string;
  /** Requests to the provider, as `METHOD path` without the query, in order. */
  readonly requests: string[] = [];
  readonly #server: Server;
  #handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;

  private constructor(server: Server, url: string, clientId: string) {
    this.#server = server;
    this.url = url;
    this.clientId = clientId;
  }

  /**
   * Listens without a provider yet, so its URL (the issuer) can be put in the configuration of an
   * API whose own URL, the redirect URI, is known only once that runs; `configure` completes it.
   */
  static async listen(clientId = 'vendor-console'): Promise<TestOpenIdProvider> {
    let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
    const server = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const op = new TestOpenIdProvider(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clientId);
    handle = (req, res) => op.#handle(req, res);
    return op;
  }

  static async start(options: TestOpenIdProviderOptions): Promise<TestOpenIdProvider> {
    const op = await TestOpenIdProvider.listen(options.clientId);
    await op.configure(options);
    return op;
  }

  async configure(options: Omit<TestOpenIdProviderOptions, 'clientId'>): Promise<void> {
    const provider = await createProvider(this.url, this.clientId, options);
    const oidc = provider.callback();
    this.#handler = (req, res) => {
      if ((req.url ?? '').startsWith('/interaction/')) {
        interaction(provider, options.users, req, res).catch((err: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String((err as Error).message));
        });
        return;
      }
      oidc(req, res);
    };
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    if (this.#handler !== undefined) return this.#handler(req, res);
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('not configured yet');
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }
}

async function createProvider(url: string, clientId: string, options: TestOpenIdProviderOptions): Promise<Provider> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-op-1', alg: 'ES256', use: 'sig' };
  const rolesClaim = options.rolesClaim ?? 'groups';
  const topClaim = rolesClaim.split('.')[0] as string;
  const rolesOf = (accountId: string | undefined) => rolesClaimValue(rolesClaim, options.users[accountId ?? ''] ?? []);
  const corsOrigins = options.corsOrigins ?? options.redirectUris.map((u) => new URL(u).origin);
  const [defaultResource] = options.resources;
  return new Provider(url, {
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        application_type: 'web',
        id_token_signed_response_alg: 'ES256',
        response_types: ['code'],
        grant_types: ['authorization_code'],
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? options.redirectUris,
      },
    ],
    // A public client proves it started the flow with PKCE; oidc-provider accepts S256 only.
    pkce: { required: () => true },
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-op-cookie-key-0123456789abcdef'] },
    claims: { openid: ['sub'], [topClaim]: [topClaim] },
    findAccount: (_ctx: unknown, sub: string): Account | undefined =>
      options.users[sub] === undefined ? undefined : { accountId: sub, claims: () => ({ sub, ...rolesOf(sub) }) },
    // The roles go into access tokens too, where the API reads them.
    extraTokenClaims: (_ctx: unknown, token: TokenContext) => (token.kind === 'AccessToken' ? rolesOf(token.accountId) : undefined),
    // Errors as plain JSON, so a failing test shows the provider's reason.
    renderError: (ctx: { type: string; body: string }, out: Record<string, unknown>) => {
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(out);
    },
    interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
    clientBasedCORS: (_ctx: unknown, origin: string) => corsOrigins.includes(origin),
    ttl: { AccessToken: options.accessTokenTtlSeconds ?? 300, IdToken: options.accessTokenTtlSeconds ?? 300, Interaction: 600, Session: 3_600, Grant: 3_600 },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string | string[]) => oneOf ?? defaultResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (!options.resources.includes(indicator)) throw new errors.InvalidTarget();
          return { scope: 'vendor', audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL: options.accessTokenTtlSeconds ?? 300, jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
  });
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return new URLSearchParams(body);
}

function page(res: ServerResponse, title: string, body: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`);
}

/** The provider's own login and consent pages: a user name signs in (no password: users are the test's). */
async function interaction(provider: Provider, users: Record<string, string[]>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const action = `/interaction/${escapeHtml(details.uid)}`;
  if (req.method === 'GET') {
    if (details.prompt.name === 'login') return loginPage(res, action);
    return page(
      res,
      'Allow access',
      `<p>The console asks for ${escapeHtml(String(details.params['scope'] ?? ''))}.</p><form method="post" action="${action}"><input type="hidden" name="step" value="consent"><button type="submit">Allow</button></form>`,
    );
  }
  const form = await readForm(req);
  if (form.get('step') === 'login') {
    const login = form.get('login') ?? '';
    if (users[login] === undefined) return loginPage(res, action, 'unknown user');
    return provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
  }
  const accountId = details.session?.accountId;
  if (accountId === undefined) return page(res, 'Sign in first', '', 400);
  const grant = details.grantId === undefined ? new provider.Grant({ accountId, clientId: String(details.params['client_id']) }) : await provider.Grant.find(details.grantId);
  if (grant === undefined) return page(res, 'Unknown grant', '', 400);
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

function loginPage(res: ServerResponse, action: string, error?: string): void {
  page(
    res,
    'Sign in to the test provider',
    `${error === undefined ? '' : `<p role="alert">${escapeHtml(error)}</p>`}<form method="post" action="${action}"><input type="hidden" name="step" value="login"><label>User <input name="login" autocomplete="username"></label><button type="submit">Sign in</button></form>`,
    error === undefined ? 200 : 401,
  );
}

/**
 * Follows an authorization request through the provider's login and consent as a browser would
 * (cookies kept, redirects followed by hand) and returns the URL it finally redirects to: the client's
 * redirect URI with `code` and `state`, or with `error`.
 */
export async function signInByFetch(authorizationUrl: string, login: string, redirectPrefix: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = (pair ?? '').indexOf('=');
      cookies.set((pair ?? '').slice(0, eq), (pair ?? '').slice(eq + 1));
    }
  };
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    remember(res);
    return res;
  };
  let url = authorizationUrl;
  let res = await send(url);
  for (let step = 0; step < 20; step++) {
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location') as string, url).href;
      if (url.startsWith(redirectPrefix)) return new URL(url);
      res = await send(url);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the provider answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`no form at ${url}: ${html.slice(0, 300)}`);
    const step = /name="step" value="([a-z]+)"/.exec(html)?.[1] ?? '';
    const body = new URLSearchParams({ step, ...(step === 'login' ? { login } : {}) });
    url = new URL(action, url).href;
    res = await send(url, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }
  throw new Error('the sign-in did not reach the redirect URI');
}

/** sessionStorage's contract over a Map, for the console's OIDC module run in Node. */
export function memoryStorage(): { entries: Map<string, string>; getItem(k: string): string | null; setItem(k: string, v: string): void; removeItem(k: string): void } {
  const entries = new Map<string, string>();
  return { entries, getItem: (k) => entries.get(k) ?? null, setItem: (k, v) => void entries.set(k, v), removeItem: (k) => void entries.delete(k) };
}
