import { createHash, timingSafeEqual } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { systemClock, type Clock } from '../../shared/clock.ts';
import type { ApiAuthConfig, OidcConfig } from '../../shared/driver-config/api.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import { silentLogger, type Logger } from '../../shared/log.ts';
import type { Caller } from './caller.ts';
import { IssuerKeys } from './issuer-keys.ts';
import { rolesFromClaim } from './roles.ts';
import { checkAuthConfig } from './settings.ts';

/** Turns a request's `Authorization` header into a caller, or throws `unauthenticated` (401). */
export interface ApiAuth {
  authenticate(authorization: string | undefined): Promise<Caller>;
}

export interface ApiAuthOptions {
  /** Production mode refuses the admin token and requires an OIDC issuer (functions/auth/settings.ts). */
  production: boolean;
  clock?: Clock;
  logger?: Logger;
  /** How the issuer's discovery document and keys are fetched. */
  fetch?: typeof globalThis.fetch;
}

/** Asymmetric signatures only: `none` and the HMAC algorithms (whose key would be public) never verify. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Longer headers are refused before any parsing. */
const MAX_TOKEN_LENGTH = 16 * 1024;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The one answer to every credential problem, so it tells nothing about what was wrong. */
export function unauthenticated(): VendorError {
  return new VendorError('unauthenticated', 'a valid bearer token is required');
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Compares in constant time: both sides are hashed first, so neither length nor content leaks through timing. */
export function adminTokenCheck(expected: string): (candidate: string) => boolean {
  const want = digest(expected);
  return (candidate) => timingSafeEqual(digest(candidate), want);
}

function oidcVerifier(oidc: OidcConfig, clock: Clock, logger: Logger, fetchImpl: typeof globalThis.fetch | undefined) {
  const keys = new IssuerKeys({
    issuer: oidc.issuer,
    clock,
    logger,
    maxAgeMs: oidc.jwksMaxAgeSeconds * 1000,
    cooldownMs: oidc.jwksCooldownSeconds * 1000,
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  });
  const verified = new VerifiedTokens();
  return async (token: string): Promise<JWTPayload> => {
    const now = clock.now();
    const known = verified.get(token, now);
    if (known !== undefined) return known;
    const payload = await verifyToken(token, now);
    verified.set(token, payload, Math.min(now + VERIFIED_TOKEN_TTL_MS, ((payload.exp as number) + oidc.clockSkewSeconds) * 1000));
    return payload;
  };

  async function verifyToken(token: string, now: number): Promise<JWTPayload> {
    const options: JWTVerifyOptions = {
      issuer: oidc.issuer,
      audience: oidc.audience,
      clockTolerance: oidc.clockSkewSeconds,
      currentDate: new Date(now),
      algorithms: ACCEPTED_ALGORITHMS,
      requiredClaims: ['exp'],
    };
    try {
      return (await jwtVerify(token, keys.getKey, options)).payload;
    } catch (err) {
      // A token without `kid` against several keys of its type: try each (jose's documented way).
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
      for await (const key of err) {
        try {
          return (await jwtVerify(token, key, options)).payload;
        } catch (inner) {
          if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }
}

/** How long a verified token is taken as verified without checking its signature again. */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const VERIFIED_TOKENS_MAX = 1_000;

/**
 * Tokens verified in the last minute, so a client sending the same token with every request pays for
 * the signature check once a minute instead of every time (it is most of what a read by id costs).
 * Only tokens that verified are kept, never past their own expiry; the size is bounded, oldest out first.
 */
class VerifiedTokens {
  readonly #entries = new Map<string, { payload: JWTPayload; until: number }>();

  get(token: string, now: number): JWTPayload | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (now < entry.until) return entry.payload;
    this.#entries.delete(token);
    return undefined;
  }

  set(token: string, payload: JWTPayload, until: number): void {
    if (this.#entries.size >= VERIFIED_TOKENS_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(token, { payload, until });
  }
}

/**
 * Authentication of API callers: the static admin token (local use) or a bearer JWT from the
 * configured OIDC issuer. Refuses at creation a configuration production mode does not allow.
 * Why a token was refused is logged for operators (never the token); the caller only learns 401.
 */
export function createApiAuth(config: ApiAuthConfig, options: ApiAuthOptions): ApiAuth {
  checkAuthConfig(config, options.production);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger();
  const isAdminToken = config.adminToken === undefined ? undefined : adminTokenCheck(config.adminToken);
  const verify = config.oidc === undefined ? undefined : oidcVerifier(config.oidc, clock, logger, options.fetch);
  const managerRoles = config.accountManagerRoles;
  const rolesClaim = config.oidc?.rolesClaim ?? 'groups';

  return {
    async authenticate(authorization) {
      if (authorization === undefined) throw unauthenticated();
      const match = authorization.length <= MAX_TOKEN_LENGTH ? BEARER.exec(authorization) : null;
      if (match === null) {
        logger.info({ reason: 'not a bearer token' }, 'API caller refused');
        throw unauthenticated();
      }
      const token = match[1] as string;
      if (isAdminToken?.(token)) return { via: 'admin-token', subject: 'admin-token', roles: new Set(), manager: true };
      if (verify === undefined) {
        logger.info({ reason: 'not the admin token, and no OIDC issuer is configured' }, 'API caller refused');
        throw unauthenticated();
      }
      let payload: JWTPayload;
      try {
        payload = await verify(token);
      } catch (err) {
        if (isVendorError(err)) throw err; // the issuer cannot be reached: 503, not the caller's fault
        const jose = err as { code?: unknown; claim?: unknown; reason?: unknown; message?: unknown };
        logger.info(
          { reason: jose.code ?? 'malformed token', ...(jose.claim === undefined ? {} : { claim: jose.claim, check: jose.reason }), detail: String(jose.message ?? '') },
          'API caller refused',
        );
        throw unauthenticated();
      }
      const roles = rolesFromClaim(payload, rolesClaim);
      const subject = typeof payload.sub === 'string' ? payload.sub : '(no sub)';
      logger.debug({ subject, roles: roles.size }, 'API caller authenticated');
      return { via: 'oidc', subject, roles, manager: managerRoles.some((r) => roles.has(r)) };
    },
  };
}
