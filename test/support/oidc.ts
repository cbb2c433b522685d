import { createServer, type Server } from 'node:http';
import type { OidcConfig } from '../../shared/driver-config/api.ts';
import type { AddressInfo } from 'node:net';
import { SignJWT, base64url, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export interface TokenOptions {
  /** Key to sign with; the first key added when absent. */
  kid?: string;
  /** Seconds since epoch the token is issued at; now (`issuer.now()`) when absent. */
  iat?: number;
  /** Lifetime in seconds from `iat` (default 300); `null` leaves `exp` out. */
  ttl?: number | null;
  nbf?: number;
  iss?: string;
  aud?: string | string[];
  /** Header fields put over the usual `{ alg, kid }`; `kid: undefined` leaves the kid out. */
  header?: Record<string, unknown>;
}

/**
 * A real OIDC issuer on loopback for tests and benchmarks: discovery document and JWKS over HTTP,
 * keys generated in process, tokens signed with them. Keys are published or withdrawn to rotate.
 */
export class TestIssuer {
  readonly #server: Server;
  readonly #keys = new Map<string, SigningKey>();
  #published: string[] = [];
  #count = 0;
  readonly url: string;
  /** Paths requested, in order. */
  readonly requests: string[] = [];
  /** Seconds since epoch that tokens are issued at by default. */
  now: () => number = () => Math.floor(Date.now() / 1000);
  /** When set, every request is answered with this status (an outage). */
  failWith: number | undefined;
  /** What the discovery document names as `jwks_uri`; this server's `/jwks` when absent. */
  jwksUri: string | undefined;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(): Promise<TestIssuer> {
    let issuer: TestIssuer | undefined;
    const server = createServer((req, res) => issuer?.handle(req.url ?? '', res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = new TestIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return issuer;
  }

  private handle(path: string, res: import('node:http').ServerResponse): void {
    this.requests.push(path);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (this.failWith !== undefined) return send(this.failWith, { error: 'down' });
    if (path === '/.well-known/openid-configuration') return send(200, { issuer: this.url, jwks_uri: this.jwksUri ?? `${this.url}/jwks`, id_token_signing_alg_values_supported: ['ES256', 'RS256'] });
    if (path === '/jwks' || path.startsWith('/jwks?')) return send(200, { keys: this.#published.map((kid) => (this.#keys.get(kid) as SigningKey).jwk) });
    send(404, { error: 'not found' });
  }

  /** Generates a key and publishes it (unless `publish` is false); returns its kid. */
  async addKey(alg: 'ES256' | 'RS256' | 'EdDSA' = 'ES256', options: { publish?: boolean; kid?: string } = {}): Promise<string> {
    const kid = options.kid ?? `key-${++this.#count}`;
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    this.#keys.set(kid, { kid, alg, privateKey, publicKey, jwk });
    if (options.publish ?? true) this.#published.push(kid);
    return kid;
  }

  /**
   * The private parts of every key, by name (`key-1 d`, `key-1 pkcs8`, ...), for a secret scanner:
   * none of them may ever appear in what the API answers or logs.
   */
  async privateParts(): Promise<Record<string, string>> {
    const parts: Record<string, string> = {};
    for (const { kid, privateKey } of this.#keys.values()) {
      const jwk = await exportJWK(privateKey);
      for (const field of ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const) {
        const value = jwk[field];
        if (value !== undefined) parts[`${kid} ${field}`] = value;
      }
      parts[`${kid} pkcs8`] = await exportPKCS8(privateKey);
    }
    return parts;
  }

  /** Sets which keys the JWKS serves. */
  publish(kids: string[]): void {
    this.#published = [...kids];
  }

  /** The public key of `kid` as PEM (for algorithm-confusion tests). */
  async publicPem(kid: string): Promise<string> {
    return exportSPKI((this.#keys.get(kid) as SigningKey).publicKey);
  }

  /** A signed JWT for `claims` with this issuer's defaults (iss, aud `vendor-api`, iat, exp). */
  async token(claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
    const kid = options.kid ?? (this.#keys.keys().next().value as string);
    const key = this.#keys.get(kid);
    if (key === undefined) throw new Error(`no key ${kid}`);
    const iat = options.iat ?? this.now();
    const payload: JWTPayload = {
      iss: options.iss ?? this.url,
      aud: options.aud ?? 'vendor-api',
      iat,
      ...(options.ttl === null ? {} : { exp: iat + (options.ttl ?? 300) }),
      ...(options.nbf === undefined ? {} : { nbf: options.nbf }),
      ...claims,
    };
    const header = { alg: key.alg, kid, ...options.header };
    return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
  }
}

/** An unsigned token (`alg: none`), which must never be accepted. */
export function unsecuredToken(payload: JWTPayload, header: Record<string, unknown> = {}): string {
  const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
  return `${enc({ alg: 'none', ...header })}.${enc(payload)}.`;
}

/** `api.auth.oidc` for a test issuer, with the product's defaults unless overridden. */
export function oidcConfig(issuer: TestIssuer, overrides: Partial<OidcConfig> = {}): OidcConfig {
  return { issuer: issuer.url, audience: ['vendor-api'], rolesClaim: 'groups', clockSkewSeconds: 60, jwksMaxAgeSeconds: 600, jwksCooldownSeconds: 30, maxTokenLifetimeSeconds: 86_400, ...overrides };
}
