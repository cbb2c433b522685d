import { VendorError, type ErrorCode } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { SecretEngine } from '../engine.ts';
import { storedValueBytes } from '../engine.ts';
import { trimSlashes, type VaultSession } from './session.ts';

type KvVersion = 1 | 2;

/**
 * Reads keys of KV secrets, v1 (`<mount>/<path>`) or v2 (`<mount>/data/<path>`). The version comes
 * from the reference's `v` key, else from the mount preflight the Vault CLI uses
 * (`sys/internal/ui/mounts/<mount>`), remembered per mount; a Vault that predates the preflight
 * answers 404 and only has v1.
 */
export function createVaultEngine(session: VaultSession, logger: Logger): SecretEngine {
  const versions = new Map<string, Promise<KvVersion>>();

  const detectVersion = (mount: string): Promise<KvVersion> => {
    let known = versions.get(mount);
    if (known === undefined) {
      known = preflight(mount);
      versions.set(mount, known);
      known.catch(() => versions.delete(mount));
    }
    return known;
  };

  const preflight = async (mount: string): Promise<KvVersion> => {
    const response = await session.send('GET', `sys/internal/ui/mounts/${encodePath(mount)}`);
    if (response.status === 404) return 1;
    const data = (response.body as { data?: { type?: unknown; options?: { version?: unknown } | null } } | undefined)?.data;
    if (response.status !== 200 || data === undefined) {
      throw failure(response.status, `cannot tell the KV version of mount ${mount} (HTTP ${response.status}${reason(session, response.body)}); add !v:1 or !v:2 to the reference`);
    }
    const version: KvVersion = data.options?.version === '2' ? 2 : 1;
    logger.debug({ mount, kvVersion: version }, 'detected vault KV version');
    return version;
  };

  return {
    async read(params) {
      const mount = trimSlashes(params.e ?? '');
      const path = trimSlashes(params.p ?? '');
      const key = params.k ?? '';
      const version: KvVersion = params.v === '1' ? 1 : params.v === '2' ? 2 : await detectVersion(mount);
      const apiPath = version === 2 ? `${encodePath(mount)}/data/${encodePath(path)}` : `${encodePath(mount)}/${encodePath(path)}`;
      const response = await session.send('GET', apiPath);
      const body = response.body as { data?: { data?: unknown; metadata?: { deletion_time?: unknown } } & Record<string, unknown> } | undefined;
      if (response.status === 404) {
        const deleted = typeof body?.data?.metadata?.deletion_time === 'string' && body.data.metadata.deletion_time !== '';
        throw new VendorError('not_found', deleted ? `the latest version of ${apiPath} is deleted` : `Vault has no secret at ${apiPath} (KV v${version})${reason(session, body)}`);
      }
      if (response.status !== 200) {
        throw failure(response.status, `Vault answered HTTP ${response.status} for ${apiPath}${reason(session, response.body)}`);
      }
      const data = version === 2 ? body?.data?.data : body?.data;
      if (data === null || typeof data !== 'object') throw new VendorError('protocol_error', `Vault's answer for ${apiPath} holds no data`);
      if (!Object.hasOwn(data, key)) throw new VendorError('not_found', `the secret at ${apiPath} has no key "${key}"`);
      return storedValueBytes((data as Record<string, unknown>)[key], params.b === 'true');
    },
  };
}

function failure(status: number, message: string): VendorError {
  const code: ErrorCode = status === 403 ? 'forbidden' : status === 400 ? 'invalid_input' : status === 412 || status === 429 || status >= 500 ? 'unavailable' : 'protocol_error';
  return new VendorError(code, message);
}

function reason(session: VaultSession, body: unknown): string {
  const text = session.describeErrors(body);
  return text === '' ? '' : `: ${text}`;
}

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
