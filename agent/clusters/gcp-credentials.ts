/**
 * The `gcp` auth provider of a kubeconfig user (GKE clusters before exec plugins), with the account's
 * `oAuthScopes` (docs/cache.md#cluster-credentials). Where the token comes from, in order:
 *
 * 1. the `access-token` the kubeconfig holds, while its `expiry` is ahead;
 * 2. `cmd-path` (with `cmd-args`): a command such as `gcloud config config-helper --format=json`,
 *    whose JSON output holds the token at `token-key` and its expiry at `expiry-key` (JSONPath of the
 *    form `{.a.b}`; defaults `{.access_token}` and `{.token_expiry}`). The command picks its own scopes;
 * 3. Google Application Default Credentials, asked for the scopes: `oAuthScopes` when set, otherwise
 *    the provider's `scopes` (comma-separated), otherwise kubectl's defaults (cloud-platform and
 *    userinfo.email). ADC is the key file named by `GOOGLE_APPLICATION_CREDENTIALS` or gcloud's
 *    `application_default_credentials.json` (a service account key signs a JWT for the scopes; an
 *    authorized user's refresh token carries the scopes it was granted with), or else the metadata
 *    server of the VM or pod (`GCE_METADATA_HOST` overrides its address).
 *
 * client-node runs `cmd-path` with a blocking `execSync` (stalling every account's cache while it runs)
 * and knows no scopes, so the agent takes gcp users out of its hands (`takeGcpUser`).
 */
import { createSign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import * as v from 'valibot';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { CachedCredentials, runCredentialCommand, type Credentials, type Obtained } from './credentials.ts';

export type GcpConfig = Readonly<Record<string, string>>;

/** kubectl's gcp provider asks for these when no scopes are configured. */
export const DEFAULT_GCP_SCOPES = ['https://www.googleapis.com/auth/cloud-platform', 'https://www.googleapis.com/auth/userinfo.email'];
const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

export interface GcpDeps {
  clock: Clock;
  env?: NodeJS.ProcessEnv;
}

/** The gcp auth-provider configuration of the current user, removed from it so client-node leaves it alone. */
export function takeGcpUser(kc: KubeConfig): GcpConfig | undefined {
  const user = kc.getCurrentUser();
  const provider = user?.authProvider as { name?: string; config?: Record<string, unknown> } | undefined | null;
  if (user === null || provider?.name !== 'gcp') return undefined;
  kc.users = kc.users.map((u) => (u.name === user.name ? { ...u, authProvider: undefined } : u));
  return Object.fromEntries(Object.entries(provider.config ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The scopes asked for: the account's `oAuthScopes`, else the provider's `scopes`, else the defaults. */
export function gcpScopes(config: GcpConfig, oAuthScopes: readonly string[]): string[] {
  const own = oAuthScopes.map((s) => s.trim()).filter((s) => s !== '');
  if (own.length > 0) return own;
  const configured = (config.scopes ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  return configured.length > 0 ? configured : DEFAULT_GCP_SCOPES;
}

/** A `{.a.b}` JSONPath of the kubeconfig, applied to `json`. */
export function jsonPathValue(json: unknown, path: string): unknown {
  const inner = /^\{\.?(.*)\}$/.exec(path.trim())?.[1];
  if (inner === undefined) throw new VendorError('invalid_input', `gcp auth provider: ${path} is not a JSONPath of the form {.a.b}`);
  let at: unknown = json;
  for (const key of inner.split('.').filter((k) => k !== '')) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

const tokenAnswer = v.object({ access_token: v.pipe(v.string(), v.nonEmpty()), expires_in: v.optional(v.number()) });
const serviceAccountKey = v.object({
  type: v.literal('service_account'),
  client_email: v.string(),
  private_key: v.string(),
  private_key_id: v.optional(v.string()),
  token_uri: v.optional(v.string()),
});
const authorizedUser = v.object({
  type: v.literal('authorized_user'),
  client_id: v.string(),
  client_secret: v.string(),
  refresh_token: v.string(),
  token_uri: v.optional(v.string()),
});

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A JWT for the OAuth 2.0 JWT bearer grant, signed with the service account's key (RS256). */
export function serviceAccountAssertion(key: v.InferOutput<typeof serviceAccountKey>, scopes: readonly string[], audience: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id === undefined ? {} : { kid: key.private_key_id }) }));
  const payload = b64url(JSON.stringify({ iss: key.client_email, scope: scopes.join(' '), aud: audience, iat, exp: iat + 3600 }));
  const signature = createSign('RSA-SHA256').update(`${header}.${payload}`).sign(key.private_key);
  return `${header}.${payload}.${b64url(signature)}`;
}

async function tokenRequest(url: string, init: RequestInit, what: string, now: number): Promise<Obtained> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    throw new VendorError('unavailable', `gcp auth provider: ${what} at ${new URL(url).host} did not answer: ${(e as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) {
    // OAuth error answers name the problem (`invalid_grant`, ...) and hold no secret.
    const reason = /"error"\s*:\s*"([^"]{1,100})"/.exec(text)?.[1];
    throw new VendorError('unauthenticated', `gcp auth provider: ${what} answered ${res.status}${reason ? ` (${reason})` : ''}`);
  }
  const parsed = v.safeParse(tokenAnswer, (() => { try { return JSON.parse(text) as unknown; } catch { return undefined; } })());
  if (!parsed.success) throw new VendorError('unauthenticated', `gcp auth provider: ${what} answered without an access_token`);
  return { token: parsed.output.access_token, ...(parsed.output.expires_in === undefined ? {} : { expiresAt: now + parsed.output.expires_in * 1000 }) };
}

async function readKeyFile(path: string): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VendorError('unauthenticated', `gcp auth provider: ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VendorError('unauthenticated', `gcp auth provider: ${path} is not a JSON credentials file`);
  }
}

async function applicationDefault(scopes: readonly string[], env: NodeJS.ProcessEnv, clock: Clock): Promise<Obtained> {
  const named = env.GOOGLE_APPLICATION_CREDENTIALS;
  const path = named !== undefined && named !== '' ? named : join(env.HOME ?? homedir(), '.config', 'gcloud', 'application_default_credentials.json');
  const file = await readKeyFile(path);
  if (file === undefined && named !== undefined && named !== '') throw new VendorError('unauthenticated', `gcp auth provider: GOOGLE_APPLICATION_CREDENTIALS names ${named}, which does not exist`);
  if (file !== undefined) {
    const sa = v.safeParse(serviceAccountKey, file);
    if (sa.success) {
      const uri = sa.output.token_uri ?? GOOGLE_TOKEN_URI;
      const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: serviceAccountAssertion(sa.output, scopes, uri, clock.now()) });
      return tokenRequest(uri, { method: 'POST', body }, 'the token endpoint (service account key)', clock.now());
    }
    const user = v.safeParse(authorizedUser, file);
    if (user.success) {
      const body = new URLSearchParams({ grant_type: 'refresh_token', client_id: user.output.client_id, client_secret: user.output.client_secret, refresh_token: user.output.refresh_token });
      return tokenRequest(user.output.token_uri ?? GOOGLE_TOKEN_URI, { method: 'POST', body }, 'the token endpoint (authorized user)', clock.now());
    }
    throw new VendorError('unauthenticated', `gcp auth provider: ${path} is neither a service account key nor an authorized user`);
  }
  const host = env.GCE_METADATA_HOST || 'metadata.google.internal';
  const url = `http://${host}/computeMetadata/v1/instance/service-accounts/default/token?scopes=${encodeURIComponent(scopes.join(','))}`;
  return tokenRequest(url, { headers: { 'Metadata-Flavor': 'Google' } }, 'the metadata server', clock.now());
}

async function fromCommand(config: GcpConfig, env: NodeJS.ProcessEnv): Promise<Obtained> {
  const command = config['cmd-path']!;
  const args = (config['cmd-args'] ?? '').split(/\s+/).filter((a) => a !== '');
  const { stdout } = await runCredentialCommand('gcp auth provider command', command, args, env);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    throw new VendorError('unauthenticated', `gcp auth provider command ${command} printed no JSON`);
  }
  const token = jsonPathValue(json, config['token-key'] ?? '{.access_token}');
  if (typeof token !== 'string' || token === '') throw new VendorError('unauthenticated', `gcp auth provider command ${command} printed no token at ${config['token-key'] ?? '{.access_token}'}`);
  const expiry = jsonPathValue(json, config['expiry-key'] ?? '{.token_expiry}');
  const expiresAt = typeof expiry === 'string' ? Date.parse(expiry) : NaN;
  return Number.isNaN(expiresAt) ? { token } : { token, expiresAt };
}

export function gcpCredentials(config: GcpConfig, oAuthScopes: readonly string[], deps: GcpDeps): Credentials {
  const env = deps.env ?? process.env;
  const scopes = gcpScopes(config, oAuthScopes);
  let cached: Obtained | undefined;
  const initial = config['access-token'];
  const initialExpiry = Date.parse(config.expiry ?? '');
  if (initial !== undefined && initial !== '' && !Number.isNaN(initialExpiry)) cached = { token: initial, expiresAt: initialExpiry };
  return new CachedCredentials(async () => {
    const held = cached;
    cached = undefined;
    if (held?.expiresAt !== undefined && held.expiresAt > deps.clock.now()) return held;
    return config['cmd-path'] ? fromCommand(config, env) : applicationDefault(scopes, env, deps.clock);
  }, deps.clock);
}
