import { GetObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { awsFailure } from '../aws-errors.ts';
import type { ErrorCode } from '../errors.ts';
import { VendorError } from '../errors.ts';

/** Where an object lives. */
export interface S3ObjectLocation {
  region: string;
  bucket: string;
  key: string;
}

export interface S3ReaderOptions {
  /** The S3 endpoint; absent, the SDK's own configuration (`AWS_ENDPOINT_URL_S3`, the shared config file) or AWS's regional one. */
  endpoint?: string;
  /** Credentials; the SDK's default chain (environment, web identity, instance role...) when absent. */
  credentials?: S3ClientConfig['credentials'];
  maxAttempts?: number;
  /** Time allowed to connect and for each answer; default 10 s. */
  timeoutMs?: number;
}

export interface S3ObjectReader {
  /** The object's bytes. @throws VendorError naming the bucket and key, never the content. */
  read(location: S3ObjectLocation): Promise<Buffer>;
  close(): void;
}

/** Secrets and account lists are small; anything larger is a wrong key, not something to hold in memory. */
export const MAX_S3_OBJECT_BYTES = 8 * 1024 * 1024;

const S3_ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  NoSuchKey: 'not_found',
  NoSuchBucket: 'not_found',
  NotFound: 'not_found',
  AccessDenied: 'forbidden',
  Forbidden: 'forbidden',
  InvalidAccessKeyId: 'unauthenticated',
  SignatureDoesNotMatch: 'unauthenticated',
  ExpiredToken: 'unauthenticated',
  InvalidToken: 'unauthenticated',
  CredentialsProviderError: 'unauthenticated',
  // The bucket is in another region than the one named.
  PermanentRedirect: 'invalid_input',
  AuthorizationHeaderMalformed: 'invalid_input',
  InvalidBucketName: 'invalid_input',
};

/** Reads whole objects through `@aws-sdk/client-s3`, one client per region. */
export function createS3ObjectReader(options: S3ReaderOptions = {}): S3ObjectReader {
  const clients = new Map<string, S3Client>();
  const client = (region: string) => {
    let found = clients.get(region);
    if (found === undefined) {
      const timeout = options.timeoutMs ?? 10_000;
      found = new S3Client({
        region,
        maxAttempts: options.maxAttempts ?? 3,
        requestHandler: { connectionTimeout: timeout, requestTimeout: timeout, throwOnRequestTimeout: true },
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      });
      clients.set(region, found);
    }
    return found;
  };
  return {
    async read({ region, bucket, key }) {
      const where = `s3://${bucket}/${key}`;
      try {
        const answer = await client(region).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (answer.ContentLength !== undefined && answer.ContentLength > MAX_S3_OBJECT_BYTES) {
          (answer.Body as { destroy?: () => void } | undefined)?.destroy?.();
          throw new VendorError('invalid_input', `${where} is larger than ${MAX_S3_OBJECT_BYTES} bytes`);
        }
        return Buffer.from((await answer.Body?.transformToByteArray()) ?? new Uint8Array());
      } catch (e) {
        if (e instanceof VendorError) throw e;
        const failure = awsFailure('S3', e, S3_ERROR_CODES);
        throw new VendorError(failure.code, `${where}: ${failure.message}`);
      }
    },
    close() {
      for (const c of clients.values()) c.destroy();
      clients.clear();
    },
  };
}
