import * as v from 'valibot';

/**
 * The `api` section of `vendor-driver.yml`: how callers of the management API authenticate. Bearer
 * JWTs from an OIDC issuer for real use; a static admin token for local use only (refused in
 * production mode, see functions/auth/settings.ts). Messages never contain the values given, since
 * some of them are secrets.
 */

/** How accounts without usable permissions are open: to every caller's writes, or to reads only. */
export const OPEN_ACCOUNT_MODES = ['readWrite', 'readOnly'] as const;
export type OpenAccountMode = (typeof OPEN_ACCOUNT_MODES)[number];

/** An admin token shorter than this is too easy to guess. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

const int = (min: number, max: number) =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));

const nonEmpty = v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'));

/** A role name as the API compares it: exact, case-sensitive, no whitespace. */
export const apiRoleNameSchema = v.pipe(nonEmpty, v.regex(/^\S+$/, 'must contain no whitespace'));

/** A day: longer than the access tokens of common issuers (minutes to hours), shorter than a stolen token should last. */
export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 86_400;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http to a loopback address (a local issuer); no query or fragment (OIDC Discovery 4.1). */
export function isIssuerUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  return secure && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
}

export const issuerSchema = v.pipe(
  v.string('must be a string'),
  v.check(isIssuerUrl, 'must be an https URL without query or fragment (http only for localhost, 127.0.0.1 or [::1])'),
);

/** `groups`, `roles`, `realm_access.roles`: a claim name, or a dot path into nested claims. */
export const rolesClaimSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[^.\s]+(\.[^.\s]+)*$/, 'must be a claim name or a dot path such as realm_access.roles'),
);

/** A URI with a scheme and no fragment, as RFC 8707 wants a resource indicator. */
function isAbsoluteUri(value: string): boolean {
  try {
    return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && new URL(value).hash === '' && !value.includes('#');
  } catch {
    return false;
  }
}

export const oidcSchema = v.strictObject({
  /** The `iss` tokens must carry; `<issuer>/.well-known/openid-configuration` names the JWKS. */
  issuer: issuerSchema,
  /** Tokens must carry one of these in `aud`. */
  audience: v.pipe(
    v.union([nonEmpty, v.pipe(v.array(nonEmpty, 'must be a string or a list of strings'), v.minLength(1, 'must not be empty'))], 'must be a string or a list of strings'),
    v.transform((a) => (typeof a === 'string' ? [a] : a)),
  ),
  rolesClaim: v.optional(rolesClaimSchema, 'groups'),
  /** Leeway for `exp` and `nbf` against clocks that differ from the issuer's. */
  clockSkewSeconds: v.optional(int(0, 300), 60),
  /** Keys are fetched again after this long, even if every token's key is known. */
  jwksMaxAgeSeconds: v.optional(int(60, 86_400), 600),
  /** A token with an unknown key id fetches the keys again at most this often. */
  jwksCooldownSeconds: v.optional(int(0, 3_600), 30),
  /**
   * Longest lifetime (`exp` - `iat`) a token may have been issued with: a stolen long-lived token is
   * refused however far from its expiry. While on, tokens without `iat` are refused too; 0 turns it off.
   */
  maxTokenLifetimeSeconds: v.optional(int(0, 31_536_000), DEFAULT_MAX_TOKEN_LIFETIME_SECONDS),
  /**
   * The console's public client at this issuer (no secret; authorization code flow with PKCE). Absent:
   * the console offers no OIDC sign-in (docs/console.md#signing-in-with-openid-connect).
   */
  clientId: v.optional(v.pipe(nonEmpty, v.maxLength(256, 'must be at most 256 characters'), v.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'))),
  /** Scopes the console asks for; `openid` is always asked for, and is all it asks for when absent. */
  scopes: v.optional(v.array(v.pipe(nonEmpty, v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be a scope token (RFC 6749 3.3)')), 'must be a list of scopes')),
  /**
   * The resource indicator (RFC 8707) the console asks its access token for, which the issuer puts in
   * `aud`: one of `audience`, and an absolute URI (RFC 8707 2) such as `https://api.example.com` or
   * `urn:vendor-agent:api`. Absent: none is sent, for issuers that set the audience by other means.
   */
  resource: v.optional(v.pipe(nonEmpty, v.check(isAbsoluteUri, 'must be an absolute URI without fragment, such as https://api.example.com or urn:vendor-agent:api'))),
});

export const apiAuthSchema = v.strictObject({
  /** Local use only: a bearer token that may do everything. Refused in production mode. */
  adminToken: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.minLength(MIN_ADMIN_TOKEN_LENGTH, `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`),
      v.maxLength(4096, 'must be at most 4096 characters'),
      v.regex(/^[A-Za-z0-9._~+/=-]+$/, 'must be letters, digits and . _ ~ + / = - only'),
    ),
  ),
  /**
   * The admin token is refused on an API that listens on, or is called from, an address other than
   * loopback; `true` accepts it there too (a trusted private network; never in production mode).
   */
  adminTokenOffLoopback: v.optional(v.boolean('must be true or false')),
  oidc: v.optional(oidcSchema),
  /** Holders of any of these roles may register, activate and remove accounts, and read and write every account. */
  accountManagerRoles: v.optional(v.array(apiRoleNameSchema, 'must be a list of role names'), []),
  /**
   * Who may write to an account whose permissions grant everyone (none listed, or not applied for a
   * role name with whitespace): every caller (`readWrite`) or managers only (`readOnly`; everyone
   * still reads). Absent: `readOnly` in production mode, `readWrite` elsewhere (functions/auth/settings.ts).
   */
  openAccounts: v.optional(v.picklist(OPEN_ACCOUNT_MODES, 'must be readWrite or readOnly')),
});

/** A browser origin as the `Origin` header carries it: `scheme://host[:port]`, nothing more. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

export const corsSchema = v.strictObject({
  /** Browser origins allowed to call the API; CORS is off without any. */
  allowOrigins: v.array(
    v.pipe(v.string('must be a string'), v.check(isOrigin, 'must be an origin such as https://console.example.com (scheme, host and port only, no path or trailing slash)')),
    'must be a list of origins',
  ),
});

export const apiSectionSchema = v.strictObject({
  auth: v.optional(apiAuthSchema, { accountManagerRoles: [] }),
  /** Cross-origin access for browser consoles; off when absent. */
  cors: v.optional(corsSchema),
});

export type ApiAuthConfig = v.InferOutput<typeof apiAuthSchema>;
export type OidcConfig = v.InferOutput<typeof oidcSchema>;
