import { readFile } from 'node:fs/promises';
import type { ServerOptions as TlsServerOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { ServerConfig, SslConfig } from '../config/schema.ts';
import type { SecretResolver } from '../secrets/index.ts';
import { onlyGet, pathOf, sendJson, sendText, startHttpServer, type RunningHttpServer } from './http-server.ts';

export interface CheckResult {
  ok: boolean;
  /** Shown on /readyz; never a secret. */
  detail?: string;
}

export type ReadinessProbe = () => CheckResult;

/**
 * What "ready" means, as a set of named probes that components plug in: the agent is ready when every
 * probe says ok (main adds `config` and `driver`; the driver connection provides the latter).
 */
export class Readiness {
  readonly #probes = new Map<string, ReadinessProbe>();

  set(name: string, probe: ReadinessProbe): void {
    this.#probes.set(name, probe);
  }

  delete(name: string): void {
    this.#probes.delete(name);
  }

  evaluate(): { ready: boolean; checks: Record<string, CheckResult> } {
    const checks: Record<string, CheckResult> = {};
    for (const [name, probe] of this.#probes) {
      try {
        checks[name] = probe();
      } catch (e) {
        checks[name] = { ok: false, detail: `probe failed: ${e instanceof Error ? e.message : String(e)}` };
      }
    }
    const ready = this.#probes.size > 0 && Object.values(checks).every((c) => c.ok);
    return { ready, checks };
  }
}

/** What the health server needs of the secret resolver: `server.ssl.*` may hold secret references. */
export type SecretValues = Pick<SecretResolver, 'resolve' | 'resolveFile'>;

/** A resolution error, prefixed with the key that holds the reference (resolver messages hold no secret). */
async function resolvedFor<T>(key: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new VendorError(isVendorError(e) ? e.code : 'internal', `${key}: ${reason}`, { issues: [{ path: key, message: reason }] });
  }
}

async function readKeyFile(key: string, setting: string, secrets: SecretValues): Promise<Buffer> {
  const path = await resolvedFor(key, secrets.resolveFile(setting));
  try {
    return await readFile(path);
  } catch (e) {
    throw new VendorError('invalid_input', `${key}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, {
      issues: [{ path: key, message: `cannot read ${path}` }],
    });
  }
}

/**
 * Node TLS options from `server.ssl.*`, secret references resolved; a file that cannot be read, a
 * reference that cannot be resolved or a key that does not open names its key.
 */
export async function tlsOptionsFrom(ssl: SslConfig, secrets: SecretValues): Promise<TlsServerOptions | undefined> {
  if (!ssl.enabled || ssl.certFile === undefined || ssl.keyFile === undefined) return undefined;
  const passwordKey = ssl.keyFilePassword === undefined ? 'server.ssl.keyPassword' : 'server.ssl.keyFilePassword';
  const password = ssl.keyFilePassword ?? ssl.keyPassword;
  const options: TlsServerOptions = {
    cert: await readKeyFile('server.ssl.certFile', ssl.certFile, secrets),
    key: await readKeyFile('server.ssl.keyFile', ssl.keyFile, secrets),
    passphrase: password === undefined ? undefined : await resolvedFor(passwordKey, secrets.resolve(password)),
    ...(ssl.caCertFile === undefined ? {} : { ca: await readKeyFile('server.ssl.caCertFile', ssl.caCertFile, secrets) }),
    requestCert: ssl.clientAuth !== 'none',
    rejectUnauthorized: ssl.clientAuth === 'need',
  };
  try {
    createSecureContext(options);
  } catch (e) {
    // OpenSSL's reason (bad decrypt, key values mismatch) says what is wrong without any secret in it.
    const reason = e instanceof Error ? e.message : String(e);
    throw new VendorError('invalid_input', `server.ssl: the certificate and key cannot be used: ${reason}`, {
      issues: [{ path: 'server.ssl.keyFile', message: reason }],
    });
  }
  return options;
}

/**
 * The health server on `server.host`:`server.port`: `/livez` answers while the process runs,
 * `/readyz` answers 200 only when every readiness probe is ok (503 and the failing checks otherwise),
 * `/health` gives both as JSON, and `/cache` what `cacheState` returns (cache-state.ts) when given.
 */
export async function startHealthServer(server: ServerConfig, readiness: Readiness, secrets: SecretValues, cacheState?: () => unknown): Promise<RunningHttpServer> {
  const tls = await tlsOptionsFrom(server.ssl, secrets);
  return startHttpServer({
    host: server.host,
    port: server.port,
    ...(tls === undefined ? {} : { tls }),
    handler: (req, res) => {
      if (!onlyGet(req, res)) return;
      const path = pathOf(req);
      if (path === '/livez') return sendText(res, 200, 'ok');
      if (path === '/readyz' || path === '/health') {
        const { ready, checks } = readiness.evaluate();
        const body = path === '/health' ? { live: true, ready, checks } : { ready, checks };
        return sendJson(res, ready ? 200 : 503, body);
      }
      if (path === '/cache' && cacheState !== undefined) return sendJson(res, 200, cacheState());
      sendText(res, 404, `not found: try /livez, /readyz${cacheState === undefined ? '' : ', /cache'} or /health`);
    },
  });
}
