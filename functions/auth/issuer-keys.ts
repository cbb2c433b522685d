import { createLocalJWKSet, errors, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import * as v from 'valibot';
import type { Clock } from '../../shared/clock.ts';
import { isIssuerUrl } from '../../shared/driver-config/api.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';

/**
 * The signing keys of one OIDC issuer, found through its discovery document
 * (`<issuer>/.well-known/openid-configuration` → `jwks_uri`) and kept in memory.
 *
 * jose's `createRemoteJWKSet` does most of this, but its cooldown and cache age read the wall clock
 * and it drops the cached keys when a refresh fails. Here the clock is injected (so the rotation and
 * rate-limit behaviour is tested without waiting), and the keys last fetched stay in use while the
 * issuer cannot be reached, so an identity provider's brief outage does not lock every caller out.
 * Key selection by `kid`, `alg` and key type is jose's own (`createLocalJWKSet`).
 */
export interface IssuerKeysOptions {
  issuer: string;
  clock: Clock;
  logger: Logger;
  /** Keys are fetched again after this long. */
  maxAgeMs: number;
  /** Least time between two fetches; a token with an unknown `kid` refetches only after it. */
  cooldownMs: number;
  /** Per request to the issuer. */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

type LocalKeys = ReturnType<typeof createLocalJWKSet>;
type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => ReturnType<LocalKeys>;

const MAX_DOCUMENT_BYTES = 512 * 1024;

const discoverySchema = v.looseObject({ issuer: v.string(), jwks_uri: v.string() });

/** The URL of the discovery document (OIDC Discovery 4: the issuer with any trailing `/` removed). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

export class IssuerKeys {
  readonly #options: IssuerKeysOptions;
  readonly #fetch: typeof globalThis.fetch;
  #keys: LocalKeys | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #attemptedAt = Number.NEGATIVE_INFINITY;
  #inflight: Promise<void> | undefined;
  /** Requests made to the issuer (discovery and JWKS), for operators' metrics and tests. */
  fetches = 0;

  constructor(options: IssuerKeysOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** The key for a token's header, as jose's `jwtVerify` asks for it. */
  readonly getKey: KeyResolver = async (header, token) => {
    const { maxAgeMs } = this.#options;
    const now = this.#options.clock.now();
    if (this.#keys === undefined) {
      if (!this.#mayFetch(now)) throw unreachable();
      await this.#refresh('first use');
    } else if (now - this.#fetchedAt >= maxAgeMs && this.#mayFetch(now)) {
      await this.#refreshKeepingOld('keys reached their maximum age');
    }
    try {
      return await (this.#keys as LocalKeys)(header, token);
    } catch (err) {
      // A new kid is how a rotation shows itself; an attacker's random kid must not make us hammer
      // the issuer, hence the cooldown.
      if (!(err instanceof errors.JWKSNoMatchingKey) || !this.#mayFetch(this.#options.clock.now())) throw err;
      await this.#refreshKeepingOld('token names an unknown key');
      return (this.#keys as LocalKeys)(header, token);
    }
  };

  #mayFetch(now: number): boolean {
    return now - this.#attemptedAt >= this.#options.cooldownMs;
  }

  /** One fetch at a time; concurrent callers share it. Throws `unavailable` when it fails. */
  #refresh(why: string): Promise<void> {
    this.#inflight ??= this.#load(why).finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #refreshKeepingOld(why: string): Promise<void> {
    try {
      await this.#refresh(why);
    } catch {
      // Logged by #load; the keys fetched before stay in use.
    }
  }

  async #load(why: string): Promise<void> {
    const { issuer, logger, clock } = this.#options;
    this.#attemptedAt = clock.now();
    try {
      const discovery = v.parse(discoverySchema, await this.#getJson(discoveryUrl(issuer)));
      if (discovery.issuer !== issuer) throw new Error(`the discovery document names issuer ${JSON.stringify(discovery.issuer)}`);
      if (!isSecureUrl(discovery.jwks_uri)) throw new Error('the discovery document names a jwks_uri that is not https');
      const keys = createLocalJWKSet((await this.#getJson(discovery.jwks_uri)) as JSONWebKeySet);
      this.#keys = keys;
      this.#fetchedAt = clock.now();
      logger.info({ issuer, why, keys: keys.jwks().keys.length }, 'issuer signing keys fetched');
    } catch (err) {
      logger.warn({ issuer, why, err: (err as Error).message, keptOldKeys: this.#keys !== undefined }, 'cannot fetch the issuer signing keys');
      throw unreachable(err);
    }
  }

  async #getJson(url: string): Promise<unknown> {
    this.fetches++;
    const res = await this.#fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(this.#options.timeoutMs ?? 5_000),
    });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const text = await res.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
    return JSON.parse(text) as unknown;
  }
}

/** https, or http to a loopback address like the issuer; unlike the issuer, a query is allowed. */
function isSecureUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return isIssuerUrl(`${url.protocol}//${url.host}`);
  } catch {
    return false;
  }
}

function unreachable(cause?: unknown): VendorError {
  return new VendorError('unavailable', 'the identity provider cannot be reached to verify the token; try again', { cause });
}
