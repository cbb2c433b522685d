import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { LOCAL_S3_CREDENTIALS, LOCAL_S3_REGION, startLocalS3, type LocalS3 } from '../../test/support/s3.ts';
import { useSecretResolvers } from '../../test/support/secret-resolvers.ts';
import { secretFailure } from '../../test/support/secret-scanner.ts';

const BUCKET = 'vendor-secrets';
const TOKEN = 's3-driver-token-5c1e9a77';
const DB_PASSWORD = 's3-db-password-0f4b2d';
const KUBECONFIG = 'apiVersion: v1\nkind: Config\ncurrent-context: prod\n# s3-kube-secret-77ab31\n';
const NOT_A_MAPPING = 'plain-secret-text-9e2a61c4';
const ROTATED = 's3-rotated-token-2b9d40aa';

const everySecret = [TOKEN, DB_PASSWORD, 's3-kube-secret-77ab31', NOT_A_MAPPING, ROTATED];
let s3: LocalS3;

beforeAll(async () => {
  s3 = await startLocalS3();
  await s3.createBucket(BUCKET);
  await s3.putObject(BUCKET, 'driver/token', TOKEN);
  await s3.putObject(BUCKET, 'db.yml', `password: ${DB_PASSWORD}\nport: 5432\n`);
  await s3.putObject(BUCKET, 'db.json', JSON.stringify({ password: DB_PASSWORD, nested: { a: 1 } }));
  await s3.putObject(BUCKET, 'kube/prod', KUBECONFIG);
  await s3.putObject(BUCKET, 'plain', NOT_A_MAPPING);
});

afterAll(() => s3.close());

const resolver = useSecretResolvers(everySecret, () => ({ s3: { endpoint: s3.endpoint, credentials: LOCAL_S3_CREDENTIALS, maxAttempts: 1 } }));
const ref = (rest: string, form = 'encrypted') => `${form}:s3!r:${LOCAL_S3_REGION}!b:${BUCKET}!f:${rest}`;
const failure = (promise: Promise<unknown>) => secretFailure(promise, everySecret);

describe('s3 engine against a local S3', () => {
  it('reads a whole object, and one key of a YAML or JSON mapping', async () => {
    const secrets = resolver();
    expect(await secrets.resolve(ref('driver/token'))).toBe(TOKEN);
    expect(await secrets.resolve(ref('db.yml!k:password'))).toBe(DB_PASSWORD);
    expect(await secrets.resolve(ref('db.yml!k:port'))).toBe('5432');
    expect(await secrets.resolve(ref('db.json!k:password'))).toBe(DB_PASSWORD);
    expect(await secrets.resolve(ref('db.json!k:nested'))).toBe('{"a":1}');
  });

  it('writes encryptedFile: objects to private files', async () => {
    const path = await resolver().resolveFile(ref('kube/prod', 'encryptedFile'));
    expect(readFileSync(path, 'utf8')).toBe(KUBECONFIG);
    expect(path.startsWith(tmpdir())).toBe(true);
  });

  it('names the bucket and key, never the content, for a missing object, bucket or key', async () => {
    const secrets = resolver();
    const missingRef = ref('driver/none');
    const missing = await failure(secrets.resolve(missingRef));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe(`cannot resolve secret ${missingRef}: s3://${BUCKET}/driver/none: S3 answered NoSuchKey: The specified key does not exist.`);
    expect(missing.details).toEqual({ reference: missingRef, engine: 's3' });

    const noBucket = await failure(secrets.resolve(`encrypted:s3!r:${LOCAL_S3_REGION}!b:no-such-bucket!f:x`));
    expect(noBucket.code).toBe('not_found');
    expect(noBucket.message).toContain('s3://no-such-bucket/x: S3 answered NoSuchBucket');

    const noKey = await failure(secrets.resolve(ref('db.yml!k:user')));
    expect(noKey.code).toBe('not_found');
    expect(noKey.message).toContain(`s3://${BUCKET}/db.yml has no key "user"`);

    const notMapping = await failure(secrets.resolve(ref('plain!k:password')));
    expect(notMapping.code).toBe('invalid_input');
    expect(notMapping.message).toContain(`s3://${BUCKET}/plain is not a YAML or JSON mapping`);
  });

  it('reads a changed object again once the cache time is over, at the same file path', async () => {
    const clock = new ManualClock(1_000);
    const secrets = resolver({ clock, cacheTtlMs: 60_000 });
    await s3.putObject(BUCKET, 'rotating', TOKEN);
    const path = await secrets.resolveFile(ref('rotating', 'encryptedFile'));
    expect(await secrets.resolve(ref('rotating'))).toBe(TOKEN);
    await s3.putObject(BUCKET, 'rotating', ROTATED);
    expect(await secrets.resolve(ref('rotating'))).toBe(TOKEN);
    await clock.advance(60_001);
    expect(await secrets.resolve(ref('rotating'))).toBe(ROTATED);
    expect(await secrets.resolveFile(ref('rotating', 'encryptedFile'))).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(ROTATED);
  });

  it('does not cache a failure: an object created after a miss is read at the next use', async () => {
    const secrets = resolver({ cacheTtlMs: 60_000 });
    expect((await failure(secrets.resolve(ref('late')))).code).toBe('not_found');
    await s3.putObject(BUCKET, 'late', TOKEN);
    expect(await secrets.resolve(ref('late'))).toBe(TOKEN);
  });

  it('finds the endpoint in AWS_ENDPOINT_URL_S3 and credentials through the SDK chain', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3', s3.endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_S3_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_S3_CREDENTIALS.secretAccessKey);
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    try {
      expect(await resolver({ s3: { maxAttempts: 1 } }).resolve(ref('driver/token'))).toBe(TOKEN);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports an endpoint that does not answer as unavailable', async () => {
    const closed = await startLocalS3();
    await closed.close();
    const error = await failure(resolver({ s3: { endpoint: closed.endpoint, credentials: LOCAL_S3_CREDENTIALS, maxAttempts: 1 } }).resolve(ref('driver/token')));
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/S3 answered \w+ \(ECONNREFUSED\)/);
  });
});
