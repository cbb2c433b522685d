import { readFile } from 'node:fs/promises';
import type { ServerOptions as TlsServerOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import { VendorError } from '../../shared/errors.ts';
import type { ServerConfig, SslConfig } from '../config/schema.ts';
import { onlyGet, pathOf, sendJson, sendText, startHttpServer, type RunningServer } from './http-server.ts';

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

async function readKeyFile(key: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    throw new VendorError('invalid_input', `${key}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, {
      issues: [{ path: key, message: `cannot read ${path}` }],
    });
  }
}

/** Node TLS options from `server.ssl.*`; a file that cannot be read or a key that does not open names its key. */
export async function tlsOptionsFrom(ssl: SslConfig): Promise<TlsServerOptions | undefined> {
  if (!ssl.enabled || ssl.certFile === undefined || ssl.keyFile === undefined) return undefined;
  const options: TlsServerOptions = {
    cert: await readKeyFile('server.ssl.certFile', ssl.certFile),
    key: await readKeyFile('server.ssl.keyFile', ssl.keyFile),
    passphrase: ssl.keyFilePassword ?? ssl.keyPassword,
    ...(ssl.caCertFile === undefined ? {} : { ca: await readKeyFile('server.ssl.caCertFile', ssl.caCertFile) }),
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
 * `/health` gives both as JSON.
 */
export async function startHealthServer(server: ServerConfig, readiness: Readiness): Promise<RunningServer> {
  const tls = await tlsOptionsFrom(server.ssl);
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
      sendText(res, 404, 'not found: try /livez, /readyz or /health');
    },
  });
}
