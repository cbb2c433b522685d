import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../shared/clock.ts';

/**
 * A Vault server on loopback that answers the part of Vault's HTTP API the agent uses, with Vault's
 * status codes and bodies: `X-Vault-Token` and `X-Vault-Namespace` headers; token, Kubernetes,
 * AppRole and userpass logins; `auth/token/lookup-self` and `renew-self`; KV v1 and v2 reads
 * (`<mount>/<path>`, `<mount>/data/<path>?version=n`); the CLI's mount preflight
 * `sys/internal/ui/mounts/<path>`; errors as `{"errors": [...]}` with 400 for bad login input,
 * 403 for a missing, unknown, expired or unauthorised token, 404 for a missing secret or an unknown
 * route, 503 while sealed. ACL paths work like Vault's: a trailing `*` matches any suffix, and KV v2
 * reads need the `<mount>/data/...` path.
 */
export interface VaultDoubleOptions {
  clock?: Clock;
  /** TLS certificate and key (PEM); plain HTTP when absent. With `clientCa`, clients must present a certificate it signed. */
  tls?: { cert: string; key: string; clientCa?: string };
  /** Enterprise namespace every request must name in `X-Vault-Namespace`; none when absent. */
  namespace?: string;
  /** Simulates a Vault older than the mount preflight endpoint: it answers 404. */
  withoutPreflight?: boolean;
}

export interface TokenOptions {
  /** ACL paths this token may read. */
  paths: readonly string[];
  ttlSeconds?: number;
  renewable?: boolean;
}

interface Token {
  paths: readonly string[];
  ttlSeconds: number;
  renewable: boolean;
  expiresAt: number;
}

interface KvSecret {
  versions: { data: Record<string, unknown>; created: number; deleted?: number }[];
}

export interface VaultRequestRecord {
  method: string;
  path: string;
  namespace: string | undefined;
  tokenSent: boolean;
}

export interface VaultDouble {
  readonly url: string;
  readonly requests: VaultRequestRecord[];
  mountKv(mount: string, version: 1 | 2): void;
  putSecret(mount: string, path: string, data: Record<string, unknown>): void;
  /** KV v2: soft-deletes the latest version. KV v1: removes the secret. */
  deleteSecret(mount: string, path: string): void;
  addToken(token: string, options: TokenOptions): void;
  addKubernetesRole(role: string, login: { jwt: string } & TokenOptions, mount?: string): void;
  addAppRole(login: { roleId: string; secretId: string } & TokenOptions, mount?: string): void;
  addUserpass(username: string, login: { password: string } & TokenOptions, mount?: string): void;
  /** Every token issued so far stops working, as after a revocation or a Vault restore. */
  revokeAllTokens(): void;
  /** The tokens issued by logins, for tests that check they never reach a log. */
  readonly issuedTokens: readonly string[];
  seal(sealed: boolean): void;
  close(): Promise<void>;
}

const DEFAULT_TTL_SECONDS = 3600;

export async function startVaultDouble(options: VaultDoubleOptions = {}): Promise<VaultDouble> {
  const clock = options.clock ?? systemClock;
  const mounts = new Map<string, { version: 1 | 2; secrets: Map<string, KvSecret> }>();
  const tokens = new Map<string, Token>();
  const issuedTokens: string[] = [];
  const logins = new Map<string, (body: Record<string, unknown>, rest: string) => Reply>();
  const requests: VaultRequestRecord[] = [];
  let sealed = false;

  const issue = (grant: TokenOptions): Record<string, unknown> => {
    const token = `hvs.${randomBytes(18).toString('base64url')}`;
    const ttlSeconds = grant.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    const renewable = grant.renewable ?? true;
    tokens.set(token, { paths: grant.paths, ttlSeconds, renewable, expiresAt: clock.now() + ttlSeconds * 1000 });
    issuedTokens.push(token);
    return authBlock(token, ttlSeconds, renewable);
  };

  const liveToken = (req: IncomingMessage): Token | undefined => {
    const header = req.headers['x-vault-token'];
    const token = typeof header === 'string' ? tokens.get(header) : undefined;
    return token !== undefined && token.expiresAt > clock.now() ? token : undefined;
  };

  const handle = (req: IncomingMessage, body: Record<string, unknown>): Reply => {
    const url = new URL(req.url ?? '/', 'http://vault');
    const method = req.method ?? 'GET';
    const namespace = header(req, 'x-vault-namespace');
    requests.push({ method, path: url.pathname, namespace, tokenSent: header(req, 'x-vault-token') !== undefined });
    if (sealed) return errors(503, 'Vault is sealed');
    if (!url.pathname.startsWith('/v1/')) return errors(404, 'no handler for route');
    const path = url.pathname.slice('/v1/'.length).replace(/\/+$/, '');
    if (normaliseNamespace(namespace) !== normaliseNamespace(options.namespace)) return noHandler(path);

    const login = [...logins.entries()].find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
    if (login !== undefined && method === 'POST') return login[1](body, path.slice(login[0].length + 1));

    const token = liveToken(req);
    if (path === 'auth/token/lookup-self' && method === 'GET') {
      if (token === undefined) return errors(403, 'permission denied');
      const ttl = Math.max(0, Math.floor((token.expiresAt - clock.now()) / 1000));
      return ok({ ...envelope(), data: { ttl, renewable: token.renewable, creation_ttl: token.ttlSeconds, policies: ['default'] } });
    }
    if (path === 'auth/token/renew-self' && method === 'POST') {
      if (token === undefined) return errors(403, 'permission denied');
      if (!token.renewable) return errors(400, 'lease is not renewable');
      token.expiresAt = clock.now() + token.ttlSeconds * 1000;
      return ok(authBlock(header(req, 'x-vault-token') ?? '', token.ttlSeconds, true));
    }
    if (path.startsWith('sys/internal/ui/mounts/') && method === 'GET') {
      if (options.withoutPreflight) return noHandler(path);
      const mountPath = path.slice('sys/internal/ui/mounts/'.length);
      const mount = [...mounts.entries()].find(([name]) => mountPath === name || mountPath.startsWith(`${name}/`));
      if (token === undefined || mount === undefined || !token.paths.some((p) => p.startsWith(`${mount[0]}/`))) {
        return errors(403, 'preflight capability check returned 403, please ensure client\'s policies grant access to path "' + mountPath + '/"');
      }
      return ok({ ...envelope(), data: { type: 'kv', path: `${mount[0]}/`, options: { version: String(mount[1].version) }, description: '' } });
    }
    if (method !== 'GET') return errors(405, 'unsupported operation');
    if (token === undefined || !token.paths.some((p) => aclMatches(p, path))) return errors(403, 'permission denied');
    return readKv(path, url.searchParams.get('version'));
  };

  const readKv = (path: string, versionParam: string | null): Reply => {
    const mount = [...mounts.entries()].find(([name]) => path.startsWith(`${name}/`));
    if (mount === undefined) return noHandler(path);
    const [name, { version, secrets }] = mount;
    const rest = path.slice(name.length + 1);
    if (version === 1) {
      const secret = secrets.get(rest)?.versions.at(-1);
      if (secret === undefined) return errors(404);
      return ok({ ...envelope(), lease_duration: 2764800, data: secret.data });
    }
    if (!rest.startsWith('data/')) return noHandler(path);
    const secret = secrets.get(rest.slice('data/'.length));
    const wanted = versionParam === null || versionParam === '0' ? secret?.versions.length : Number(versionParam);
    const entry = wanted === undefined ? undefined : secret?.versions[wanted - 1];
    if (entry === undefined || wanted === undefined) return errors(404);
    const metadata = {
      created_time: new Date(entry.created).toISOString(),
      custom_metadata: null,
      deletion_time: entry.deleted === undefined ? '' : new Date(entry.deleted).toISOString(),
      destroyed: false,
      version: wanted,
    };
    // A soft-deleted version is a 404 whose body still carries the metadata, as Vault sends it.
    if (entry.deleted !== undefined) return { status: 404, body: { ...envelope(), data: { data: null, metadata } } };
    return ok({ ...envelope(), data: { data: entry.data, metadata } });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      const raw = Buffer.concat(chunks).toString('utf8');
      let reply: Reply;
      try {
        if (raw !== '') body = JSON.parse(raw) as Record<string, unknown>;
        reply = handle(req, body);
      } catch {
        reply = errors(400, 'failed to parse JSON input');
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(reply.status === 204 ? undefined : JSON.stringify(reply.body));
    });
  };

  const tls = options.tls;
  const server: Server =
    tls === undefined
      ? createHttpServer(onRequest)
      : createHttpsServer(
          { cert: tls.cert, key: tls.key, ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }) },
          onRequest,
        );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const double: VaultDouble = {
    url: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    issuedTokens,
    mountKv(mount, version) {
      mounts.set(trimSlashes(mount), { version, secrets: new Map() });
    },
    putSecret(mount, path, data) {
      const kv = mounts.get(trimSlashes(mount));
      if (kv === undefined) throw new Error(`no KV mount ${mount}`);
      const secret = kv.secrets.get(trimSlashes(path)) ?? { versions: [] };
      if (kv.version === 1) secret.versions = [];
      secret.versions.push({ data, created: clock.now() });
      kv.secrets.set(trimSlashes(path), secret);
    },
    deleteSecret(mount, path) {
      const kv = mounts.get(trimSlashes(mount));
      if (kv === undefined) return;
      if (kv.version === 1) kv.secrets.delete(trimSlashes(path));
      const latest = kv.secrets.get(trimSlashes(path))?.versions.at(-1);
      if (latest !== undefined) latest.deleted = clock.now();
    },
    addToken(token, grant) {
      const ttlSeconds = grant.ttlSeconds ?? DEFAULT_TTL_SECONDS;
      tokens.set(token, { paths: grant.paths, ttlSeconds, renewable: grant.renewable ?? false, expiresAt: clock.now() + ttlSeconds * 1000 });
    },
    addKubernetesRole(role, login, mount = 'kubernetes') {
      const roles = new Map<string, typeof login>();
      const previous = logins.get(`auth/${mount}`);
      logins.set(`auth/${mount}`, (body, rest) => {
        if (rest !== 'login') return noHandler(`auth/${mount}/${rest}`);
        if (typeof body.role !== 'string' || body.role === '') return errors(400, 'missing role');
        if (typeof body.jwt !== 'string' || body.jwt === '') return errors(400, 'missing jwt');
        const known = roles.get(body.role);
        if (known === undefined) return previous?.(body, rest) ?? errors(400, `invalid role name "${body.role}"`);
        if (known.jwt !== body.jwt) return errors(403, 'permission denied');
        return ok(issue(known));
      });
      roles.set(role, login);
    },
    addAppRole(login, mount = 'approle') {
      logins.set(`auth/${mount}`, (body, rest) => {
        if (rest !== 'login') return noHandler(`auth/${mount}/${rest}`);
        if (typeof body.role_id !== 'string' || body.role_id === '') return errors(400, 'missing role_id');
        if (body.role_id !== login.roleId || body.secret_id !== login.secretId) return errors(400, 'invalid role or secret ID');
        return ok(issue(login));
      });
    },
    addUserpass(username, login, mount = 'userpass') {
      logins.set(`auth/${mount}`, (body, rest) => {
        if (!rest.startsWith('login/')) return noHandler(`auth/${mount}/${rest}`);
        if (typeof body.password !== 'string' || body.password === '') return errors(400, 'missing password');
        if (rest !== `login/${username}` || body.password !== login.password) return errors(400, 'invalid username or password');
        return ok(issue(login));
      });
    },
    revokeAllTokens() {
      tokens.clear();
    },
    seal(value) {
      sealed = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return double;
}

interface Reply {
  status: number;
  body: unknown;
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function errors(status: number, ...messages: string[]): Reply {
  return { status, body: { errors: messages } };
}

function noHandler(path: string): Reply {
  return errors(404, `no handler for route "${path}". route entry not found.`);
}

function envelope() {
  return { request_id: randomUUID(), lease_id: '', renewable: false, lease_duration: 0, wrap_info: null, warnings: null, auth: null };
}

function authBlock(token: string, ttlSeconds: number, renewable: boolean) {
  return {
    ...envelope(),
    data: null,
    auth: {
      client_token: token,
      accessor: randomBytes(12).toString('base64url'),
      policies: ['default'],
      token_policies: ['default'],
      metadata: {},
      lease_duration: ttlSeconds,
      renewable,
      token_type: 'service',
      orphan: true,
    },
  };
}

function aclMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function normaliseNamespace(ns: string | undefined): string {
  return trimSlashes(ns ?? '');
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
