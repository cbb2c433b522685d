import { errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { Clock } from '../../shared/clock.ts';
import type { OidcConfig } from '../../shared/driver-config/api.ts';
import type { Logger } from '../../shared/log.ts';
import { IssuerKeys } from './issuer-keys.ts';

/** Asymmetric signatures only: `none` and the HMAC algorithms (whose key would be public) never verify. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * Verifies bearer JWTs of one OIDC issuer (signature by its published keys, `iss`, `aud`, `exp`, `nbf`
 * with the clock skew, and a lifetime `exp` - `iat` of at most `maxTokenLifetimeSeconds`) and returns
 * their claims; throws jose's error for a token that is not valid, and
 * `unavailable` when the issuer's keys cannot be had.
 */
export function oidcVerifier(
  oidc: OidcConfig,
  options: { clock: Clock; logger: Logger; fetch?: typeof globalThis.fetch },
): (token: string) => Promise<JWTPayload> {
  const { clock } = options;
  const keys = new IssuerKeys({
    ...options,
    issuer: oidc.issuer,
    maxAgeMs: oidc.jwksMaxAgeSeconds * 1000,
    cooldownMs: oidc.jwksCooldownSeconds * 1000,
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
    const verifyOptions: JWTVerifyOptions = {
      issuer: oidc.issuer,
      audience: oidc.audience,
      clockTolerance: oidc.clockSkewSeconds,
      currentDate: new Date(now),
      algorithms: ACCEPTED_ALGORITHMS,
      requiredClaims: oidc.maxTokenLifetimeSeconds > 0 ? ['exp', 'iat'] : ['exp'],
    };
    return withinLifetime(await verifySignature(token, verifyOptions), oidc.maxTokenLifetimeSeconds);
  }

  async function verifySignature(token: string, verifyOptions: JWTVerifyOptions): Promise<JWTPayload> {
    try {
      return (await jwtVerify(token, keys.getKey, verifyOptions)).payload;
    } catch (err) {
      // A token without `kid` against several keys of its type: try each (jose's documented way).
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
      for await (const key of err) {
        try {
          return (await jwtVerify(token, key, verifyOptions)).payload;
        } catch (inner) {
          if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
        }
      }
      throw new errors.JWSSignatureVerificationFailed();
    }
  }
}

/**
 * Refuses a token issued to live longer than `maxSeconds` (0: any lifetime). jose has checked that
 * `exp` and `iat` are numbers; the error is jose's, so it is logged and answered as any other claim.
 */
function withinLifetime(payload: JWTPayload, maxSeconds: number): JWTPayload {
  if (maxSeconds > 0 && (payload.exp as number) - (payload.iat as number) > maxSeconds) {
    throw new errors.JWTClaimValidationFailed(`token lifetime (exp - iat) is over ${maxSeconds} seconds`, payload, 'iat', 'check_failed');
  }
  return payload;
}

/** How long a verified token is taken as verified without checking its signature again. */
const VERIFIED_TOKEN_TTL_MS = 60_000;
const VERIFIED_TOKENS_MAX = 1_000;

/**
 * Tokens verified in the last minute, so a client sending the same token with every request pays for
 * the signature check once a minute instead of every time (a large part of what a read by id costs).
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
