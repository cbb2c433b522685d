import { createHash, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { systemClock, type Clock } from '../../shared/clock.ts';
import type { ApiAuthConfig } from '../../shared/driver-config/api.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import { silentLogger, type Logger } from '../../shared/log.ts';
import { isLoopback } from '../../shared/loopback.ts';
import type { Caller } from './caller.ts';
import { oidcVerifier } from './oidc-verifier.ts';
import { rolesFromClaim } from './roles.ts';
import { checkAuthConfig, openAccountMode } from './settings.ts';

/** Where a request came from, when the server knows it (the Node server does; `app.request` in tests does not). */
export interface RequestOrigin {
  remoteAddress?: string | undefined;
}

/** Turns a request's `Authorization` header into a caller, or throws `unauthenticated` (401). */
export interface ApiAuth {
  authenticate(authorization: string | undefined, origin?: RequestOrigin): Promise<Caller>;
}

export interface ApiAuthOptions {
  /** Production mode refuses the admin token and requires an OIDC issuer (functions/auth/settings.ts). */
  production: boolean;
  clock?: Clock;
  logger?: Logger;
  /** How the issuer's discovery document and keys are fetched. */
  fetch?: typeof globalThis.fetch;
}

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
  const verify = config.oidc === undefined ? undefined : oidcVerifier(config.oidc, { clock, logger, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) });
  const managerRoles = config.accountManagerRoles;
  const rolesClaim = config.oidc?.rolesClaim ?? 'groups';
  const openWrites = openAccountMode(config, options.production) === 'readWrite';
  const adminTokenAnywhere = config.adminTokenOffLoopback === true;

  return {
    async authenticate(authorization, origin) {
      if (authorization === undefined) throw unauthenticated();
      const match = authorization.length <= MAX_TOKEN_LENGTH ? BEARER.exec(authorization) : null;
      if (match === null) {
        logger.info({ reason: 'not a bearer token' }, 'API caller refused');
        throw unauthenticated();
      }
      const token = match[1] as string;
      if (isAdminToken?.(token)) {
        // A token that may do everything is for this machine: from elsewhere it is refused as any bad credential.
        const from = origin?.remoteAddress;
        if (!adminTokenAnywhere && from !== undefined && !isLoopback(from)) {
          logger.warn({ reason: 'the admin token from an address other than loopback (api.auth.adminTokenOffLoopback is not set)', remoteAddress: from }, 'API caller refused');
          throw unauthenticated();
        }
        return { via: 'admin-token', subject: 'admin-token', roles: new Set(), manager: true, writesOpenAccounts: true };
      }
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
      const manager = managerRoles.some((r) => roles.has(r));
      return { via: 'oidc', subject, roles, manager, writesOpenAccounts: manager || openWrites };
    },
  };
}
