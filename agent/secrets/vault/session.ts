import { readFile } from 'node:fs/promises';
import type { Clock } from '../../../shared/clock.ts';
import { VendorError, type ErrorCode } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import { DEFAULT_AUTH_MOUNTS, type VaultConfig } from '../config.ts';
import { requestJson, type JsonResponse, type TlsOptions } from '../http-json.ts';

export interface VaultSessionDeps {
  clock: Clock;
  logger: Logger;
  /** Where VAULT_TOKEN is looked up when `token` is not configured. */
  env: Readonly<Record<string, string | undefined>>;
}

interface Lease {
  token: string;
  /** When to ask Vault to extend the token; never when undefined. */
  renewAt: number | undefined;
  expiresAt: number | undefined;
  renewable: boolean;
}

/** Renew once two thirds of a lease have passed, as Vault's own agent does, so a slow renewal still lands in time. */
const RENEW_FRACTION = 2 / 3;

/**
 * An authenticated conversation with one Vault: logs in with the configured method, renews the token
 * when two thirds of its lease have passed, logs in again when renewal fails, the lease ran out or
 * Vault answers 403 (a revoked or restored token), and sends every request with the token and
 * namespace. Tokens and credentials never reach the logger or an error message.
 */
export class VaultSession {
  readonly #config: VaultConfig & { url: string };
  readonly #deps: VaultSessionDeps;
  #lease: Lease | undefined;
  #establishing: Promise<Lease> | undefined;
  #tls: Promise<TlsOptions> | undefined;
  /** Every credential this session has handled, scrubbed from any text Vault sends back. */
  readonly #credentials = new Set<string>();

  constructor(config: VaultConfig & { url: string }, deps: VaultSessionDeps) {
    this.#config = config;
    this.#deps = deps;
  }

  get #loginMethod(): boolean {
    return this.#config.authMethod !== 'TOKEN';
  }

  /** Sends an authenticated request; a 403 with a login method triggers one fresh login and a retry. */
  async send(method: 'GET' | 'POST', apiPath: string, body?: unknown): Promise<JsonResponse> {
    const lease = await this.#currentLease();
    const response = await this.#request(method, apiPath, body, lease.token);
    if (response.status !== 403 || !this.#loginMethod) return response;
    this.#deps.logger.warn({ vault: this.#config.url, path: apiPath }, 'vault refused the token; logging in again');
    if (this.#lease === lease) this.#lease = undefined;
    const fresh = await this.#currentLease();
    return this.#request(method, apiPath, body, fresh.token);
  }

  /** Vault's `errors` list as one line, with any credential of this session blanked out. */
  describeErrors(body: unknown): string {
    const list = (body as { errors?: unknown } | undefined)?.errors;
    let text = Array.isArray(list) ? list.filter((e): e is string => typeof e === 'string').join('; ') : '';
    for (const secret of this.#credentials) text = text.split(secret).join('[redacted]');
    return text.length > 300 ? `${text.slice(0, 300)}...` : text;
  }

  async #currentLease(): Promise<Lease> {
    const now = this.#deps.clock.now();
    const lease = this.#lease;
    if (lease !== undefined) {
      const expired = lease.expiresAt !== undefined && now >= lease.expiresAt;
      const due = lease.renewAt !== undefined && now >= lease.renewAt;
      if (!expired && !due) return lease;
      if (!expired && lease.renewable) return this.#single(() => this.#renew(lease));
      // A configured token cannot be replaced; it is used until Vault refuses it.
      if (!this.#loginMethod) return lease;
    }
    return this.#single(() => this.#establish());
  }

  /** Concurrent callers share one login or renewal instead of each starting their own. */
  #single(work: () => Promise<Lease>): Promise<Lease> {
    this.#establishing ??= work().finally(() => {
      this.#establishing = undefined;
    });
    return this.#establishing;
  }

  async #establish(): Promise<Lease> {
    const lease = this.#loginMethod ? await this.#login() : await this.#useConfiguredToken();
    this.#lease = lease;
    return lease;
  }

  async #useConfiguredToken(): Promise<Lease> {
    const token = this.#config.token ?? this.#deps.env.VAULT_TOKEN;
    if (token === undefined || token === '') {
      throw new VendorError('unauthenticated', 'secrets.vault.authMethod is TOKEN but secrets.vault.token is not set and VAULT_TOKEN is empty');
    }
    this.#credentials.add(token);
    // The lease of a configured token is learnt from Vault; a token that may not look itself up is used as it is.
    const response = await this.#request('GET', 'auth/token/lookup-self', undefined, token);
    const data = (response.body as { data?: { ttl?: unknown; renewable?: unknown } } | undefined)?.data;
    if (response.status !== 200 || typeof data?.ttl !== 'number') return { token, renewAt: undefined, expiresAt: undefined, renewable: false };
    return this.#lease_(token, data.ttl, data.renewable === true);
  }

  async #login(): Promise<Lease> {
    const { authMethod } = this.#config;
    const { mount, path, body } = await this.#loginRequest();
    const response = await this.#request('POST', path, body, undefined);
    const auth = (response.body as { auth?: { client_token?: unknown; lease_duration?: unknown; renewable?: unknown } } | undefined)?.auth;
    if (response.status !== 200 || typeof auth?.client_token !== 'string') {
      const code: ErrorCode = response.status >= 500 ? 'unavailable' : 'unauthenticated';
      throw new VendorError(code, `Vault ${authMethod} login at auth/${mount} failed: HTTP ${response.status}${this.#reason(response.body)}`);
    }
    this.#credentials.add(auth.client_token);
    const ttl = typeof auth.lease_duration === 'number' ? auth.lease_duration : 0;
    this.#deps.logger.info({ vault: this.#config.url, authMethod, mount, ttlSeconds: ttl }, 'logged in to vault');
    return this.#lease_(auth.client_token, ttl, auth.renewable === true);
  }

  async #loginRequest(): Promise<{ mount: string; path: string; body: Record<string, string> }> {
    const c = this.#config;
    const remember = <T extends Record<string, string>>(body: T): T => {
      for (const value of Object.values(body)) this.#credentials.add(value);
      return body;
    };
    switch (c.authMethod) {
      case 'KUBERNETES': {
        const mount = trimSlashes(c.path ?? DEFAULT_AUTH_MOUNTS.KUBERNETES);
        const jwt = await readConfiguredFile(c.serviceAccountTokenFile, 'secrets.vault.serviceAccountTokenFile');
        return { mount, path: `auth/${mount}/login`, body: { role: c.role ?? '', ...remember({ jwt: jwt.trim() }) } };
      }
      case 'APPROLE': {
        const mount = trimSlashes(c.path ?? DEFAULT_AUTH_MOUNTS.APPROLE);
        return { mount, path: `auth/${mount}/login`, body: { role_id: c.roleId ?? '', ...remember({ secret_id: c.secretId ?? '' }) } };
      }
      case 'USERPASS': {
        const mount = trimSlashes(c.userAuthPath ?? c.path ?? DEFAULT_AUTH_MOUNTS.USERPASS);
        const path = `auth/${mount}/login/${encodeURIComponent(c.username ?? '')}`;
        return { mount, path, body: remember({ password: c.password ?? '' }) };
      }
      case 'TOKEN':
        throw new VendorError('internal', 'TOKEN is not a login method');
    }
  }

  async #renew(lease: Lease): Promise<Lease> {
    const response = await this.#request('POST', 'auth/token/renew-self', {}, lease.token).catch(() => undefined);
    const auth = (response?.body as { auth?: { lease_duration?: unknown; renewable?: unknown } } | undefined)?.auth;
    if (response?.status === 200 && typeof auth?.lease_duration === 'number') {
      this.#deps.logger.debug({ vault: this.#config.url, ttlSeconds: auth.lease_duration }, 'renewed vault token');
      this.#lease = this.#lease_(lease.token, auth.lease_duration, auth.renewable === true);
      return this.#lease;
    }
    const status = response === undefined ? 'no answer' : `HTTP ${response.status}`;
    if (this.#loginMethod) {
      this.#deps.logger.warn({ vault: this.#config.url, status }, 'vault token renewal failed; logging in again');
      return this.#establish();
    }
    this.#deps.logger.warn({ vault: this.#config.url, status }, 'vault token renewal failed; the configured token is used until it expires');
    this.#lease = { ...lease, renewAt: undefined };
    return this.#lease;
  }

  #lease_(token: string, ttlSeconds: number, renewable: boolean): Lease {
    const now = this.#deps.clock.now();
    if (ttlSeconds <= 0) return { token, renewAt: undefined, expiresAt: undefined, renewable: false };
    return { token, renewable, expiresAt: now + ttlSeconds * 1000, renewAt: now + ttlSeconds * 1000 * RENEW_FRACTION };
  }

  #reason(body: unknown): string {
    const text = this.describeErrors(body);
    return text === '' ? '' : ` (${text})`;
  }

  async #request(method: 'GET' | 'POST', apiPath: string, body: unknown, token: string | undefined): Promise<JsonResponse> {
    const headers: Record<string, string> = { 'x-vault-request': 'true' };
    if (token !== undefined) headers['x-vault-token'] = token;
    if (this.#config.namespace !== undefined) headers['x-vault-namespace'] = this.#config.namespace;
    this.#tls ??= this.#loadTls().catch((e: unknown) => {
      this.#tls = undefined;
      throw e;
    });
    const tls = await this.#tls;
    const url = new URL(`${this.#config.url.replace(/\/+$/, '')}/v1/${apiPath}`);
    return requestJson({ method, url, headers, body, timeoutMs: this.#config.timeoutMs, tls });
  }

  async #loadTls(): Promise<TlsOptions> {
    const t = this.#config.tls;
    const file = (path: string | undefined, key: string) => (path === undefined ? undefined : readConfiguredFile(path, `secrets.vault.tls.${key}`));
    const [ca, cert, key] = await Promise.all([file(t.caCertFile, 'caCertFile'), file(t.clientCertFile, 'clientCertFile'), file(t.clientKeyFile, 'clientKeyFile')]);
    return {
      rejectUnauthorized: !t.insecureSkipVerify,
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      ...(t.serverName === undefined ? {} : { servername: t.serverName }),
    };
  }
}

async function readConfiguredFile(path: string, key: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new VendorError('invalid_input', `${key} ${path} cannot be read (${code})`);
  }
}

export function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
