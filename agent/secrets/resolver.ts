import { tmpdir } from 'node:os';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { SecretEngineName } from '../../shared/secrets/engines.ts';
import { FILE_REFERENCE_MISPLACED, formatSecretReference, parseSecretReference, type SecretReference } from '../../shared/secrets/reference.ts';
import type { SecretsConfig } from './config.ts';
import type { SecretEngine } from './engine.ts';
import { PrivateFiles } from './files.ts';
import type { S3SecretOptions } from './s3.ts';
import type { SecretsManagerOptions } from './secrets-manager.ts';
import { createVaultEngine } from './vault/engine.ts';
import { VaultSession } from './vault/session.ts';

export interface SecretResolverOptions {
  logger: Logger;
  clock?: Clock;
  /** How long a resolved secret is reused before it is read again; 0 reads every time. Default 5 minutes. */
  cacheTtlMs?: number;
  /** Parent of the private folder for `encryptedFile:` secrets; the system temp folder by default. */
  tempDir?: string;
  /** Environment for VAULT_TOKEN and VENDOR_SECRETS_MANAGER_ENDPOINT; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
  secretsManager?: SecretsManagerOptions;
  /** S3 endpoint and credentials; by default the SDK's own configuration (`AWS_ENDPOINT_URL_S3`, default credential chain). */
  s3?: S3SecretOptions;
}

export interface SecretResolver {
  /** A string setting: plain values as they are, `encrypted:` references as the secret's text. */
  resolve(value: string): Promise<string>;
  /**
   * A file path setting: plain paths as they are, `encrypted:` references as the path the secret
   * holds, `encryptedFile:` references as the path of a private file holding the secret.
   */
  resolveFile(value: string): Promise<string>;
  /** Deletes every file written for `encryptedFile:` references and forgets cached secrets. */
  close(): Promise<void>;
}

export const DEFAULT_SECRET_CACHE_TTL_MS = 5 * 60_000;

/**
 * Resolves secret references where they are used. Errors name the reference (engine and where the
 * secret lives) and the reason; values are never logged, never put in an error, and kept only in
 * the cache for its TTL and in the private files until close.
 */
export function createSecretResolver(config: SecretsConfig | undefined, options: SecretResolverOptions): SecretResolver {
  const clock = options.clock ?? systemClock;
  const env = options.env ?? process.env;
  const ttl = options.cacheTtlMs ?? DEFAULT_SECRET_CACHE_TTL_MS;
  const logger = options.logger;
  const files = new PrivateFiles(options.tempDir ?? tmpdir());
  const cache = new Map<string, { bytes: Buffer; expiresAt: number }>();
  const inFlight = new Map<string, Promise<Buffer>>();
  const engines = new Map<SecretEngineName, Promise<SecretEngine>>();
  let closed = false;

  const engine = (name: SecretEngineName): Promise<SecretEngine> => {
    let found = engines.get(name);
    if (found === undefined) {
      found = name === 'vault' ? Promise.resolve(vaultEngine()) : name === 's3' ? s3Engine() : secretsManagerEngine();
      engines.set(name, found);
    }
    return found;
  };

  // The AWS SDK costs tens of milliseconds and megabytes to load; agents that never name
  // secrets-manager or s3 never load it.
  const secretsManagerEngine = async (): Promise<SecretEngine> => {
    const { createSecretsManagerEngine } = await import('./secrets-manager.ts');
    return createSecretsManagerEngine(options.secretsManager ?? {}, { env, logger });
  };

  const s3Engine = async (): Promise<SecretEngine> => {
    const { createS3Engine } = await import('./s3.ts');
    return createS3Engine(options.s3 ?? {}, { logger });
  };

  const vaultEngine = (): SecretEngine => {
    const vault = config?.vault;
    if (vault?.enabled !== true || vault.url === undefined) {
      return {
        read: () => Promise.reject(new VendorError('invalid_input', 'secrets.vault.enabled is not true in vendor-agent.yml, so vault references cannot be resolved')),
      };
    }
    return createVaultEngine(new VaultSession({ ...vault, url: vault.url }, { clock, logger, env }), logger);
  };

  const read = async (reference: SecretReference): Promise<Buffer> => {
    if (closed) throw new VendorError('unavailable', 'the secret resolver is closed');
    const label = formatSecretReference(reference);
    const key = formatSecretReference({ ...reference, form: 'encrypted' });
    const cached = cache.get(key);
    if (cached !== undefined && cached.expiresAt > clock.now()) {
      logger.trace({ reference: label, engine: reference.engine }, 'secret served from cache');
      return cached.bytes;
    }
    let pending = inFlight.get(key);
    if (pending === undefined) {
      pending = engine(reference.engine)
        .then((found) => found.read(reference.params))
        .then(
          (bytes) => {
            if (ttl > 0 && !closed) cache.set(key, { bytes, expiresAt: clock.now() + ttl });
            logger.debug({ reference: label, engine: reference.engine }, 'resolved secret');
            return bytes;
          },
          (e: unknown) => {
            const error = resolutionError(label, reference.engine, e);
            logger.warn({ reference: label, engine: reference.engine, code: error.code, reason: reasonOf(e) }, 'cannot resolve secret');
            throw error;
          },
        )
        .finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };

  return {
    async resolve(value) {
      const reference = parseSecretReference(value);
      if (reference === undefined) return value;
      if (reference.form === 'encryptedFile') {
        throw new VendorError('invalid_input', `${formatSecretReference(reference)}: ${FILE_REFERENCE_MISPLACED}`, {
          details: { reference: formatSecretReference(reference), engine: reference.engine },
        });
      }
      return (await read(reference)).toString('utf8');
    },
    async resolveFile(value) {
      const reference = parseSecretReference(value);
      if (reference === undefined) return value;
      const bytes = await read(reference);
      if (reference.form === 'encryptedFile') return files.write(formatSecretReference(reference), bytes);
      const path = bytes.toString('utf8');
      // Callers print the paths they cannot open; a file's content stored by mistake must not be printed.
      if (!looksLikePath(path)) {
        throw new VendorError('invalid_input', `cannot resolve secret ${formatSecretReference(reference)}: its value is not a file path; use encryptedFile: to have it written to a file`, {
          details: { reference: formatSecretReference(reference), engine: reference.engine },
        });
      }
      return path;
    },
    async close() {
      closed = true;
      cache.clear();
      await files.remove();
    },
  };
}

function looksLikePath(text: string): boolean {
  return text !== '' && text.length <= 4096 && !/[\n\r\0]/.test(text);
}

function resolutionError(label: string, engine: SecretEngineName, e: unknown): VendorError {
  const code = isVendorError(e) ? e.code : 'internal';
  return new VendorError(code, `cannot resolve secret ${label}: ${reasonOf(e)}`, { details: { reference: label, engine } });
}

// Only our own errors carry a message written not to hold secret data; anything else is named by type.
function reasonOf(e: unknown): string {
  if (isVendorError(e)) return e.message;
  return `unexpected ${e instanceof Error ? e.name : typeof e}`;
}
