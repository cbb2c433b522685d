import { parse } from 'yaml';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { createS3ObjectReader, type S3ReaderOptions } from '../../shared/sources/s3-object.ts';
import { storedValueBytes, type SecretEngine } from './engine.ts';

export type S3SecretOptions = S3ReaderOptions;

/**
 * Objects in S3 through the SDK, one client per region: `r` region, `b` bucket, `f` the object's key;
 * `k` takes one key of an object holding a YAML or JSON mapping, else the whole object is the secret.
 * The endpoint and credentials are the SDK's own configuration (`AWS_ENDPOINT_URL_S3`, the default
 * credential chain) unless the options name them.
 */
export function createS3Engine(options: S3SecretOptions, deps: { logger: Logger }): SecretEngine {
  const reader = createS3ObjectReader(options);
  deps.logger.debug({ endpoint: options.endpoint ?? 'default' }, 'created s3 secret reader');
  return {
    async read(params) {
      const location = { region: params.r ?? '', bucket: params.b ?? '', key: params.f ?? '' };
      const bytes = await reader.read(location);
      const key = params.k;
      if (key === undefined) return bytes;
      const where = `s3://${location.bucket}/${location.key}`;
      const fields = parseMapping(bytes);
      if (fields === undefined) throw new VendorError('invalid_input', `${where} is not a YAML or JSON mapping, so it has no key "${key}"`);
      if (!Object.hasOwn(fields, key)) throw new VendorError('not_found', `${where} has no key "${key}"`);
      return storedValueBytes(fields[key], false);
    },
  };
}

// The parser's own errors quote the text they choke on, which is the secret: they are dropped.
function parseMapping(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = parse(bytes.toString('utf8'), { uniqueKeys: true });
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
