import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecretsManagerDouble, type SecretsManagerDouble } from '../../test/doubles/secrets-manager.ts';
import { useSecretResolvers } from '../../test/support/secret-resolvers.ts';
import { secretFailure } from '../../test/support/secret-scanner.ts';

const REGION = 'eu-west-1';
const CREDENTIALS = { accessKeyId: 'AKIDVENDORTEST0001', secretAccessKey: 'aws-secret-access-key-3e8f1a' };
const DRIVER_TOKEN = 'driver-bearer-token-71c0aa';
const DB_PASSWORD = 'json-db-password-c41d2e';
const BINARY = Buffer.from([0, 1, 2, 250, 251, 252]);
const KUBECONFIG = 'apiVersion: v1\nkind: Config\ncurrent-context: prod\n# kube-secret-5a6b7c\n';

const everySecret = [CREDENTIALS.secretAccessKey, DRIVER_TOKEN, DB_PASSWORD, 'kube-secret-5a6b7c', 'not-json-secret-88aa'];
let sm: SecretsManagerDouble;
let arn: string;

beforeAll(async () => {
  sm = await startSecretsManagerDouble({ region: REGION, credentials: CREDENTIALS });
  sm.putSecret('vendor/driver-token', { string: DRIVER_TOKEN });
  arn = sm.putSecret('vendor/db', { string: JSON.stringify({ password: DB_PASSWORD, port: 5432, kubeconfig: Buffer.from(KUBECONFIG).toString('base64') }) });
  sm.putSecret('vendor/blob', { binary: BINARY });
  sm.putSecret('vendor/not-json', { string: 'not-json-secret-88aa' });
  sm.putSecret('vendor/locked', { string: 'x' });
  sm.denyRead('vendor/locked');
  sm.putSecret('vendor/retired', { string: 'x' });
  sm.scheduleDeletion('vendor/retired');
});

afterAll(() => sm.close());

const resolver = useSecretResolvers(everySecret, () => ({ secretsManager: { endpoint: sm.endpoint, credentials: CREDENTIALS, maxAttempts: 1 } }));

const failure = (promise: Promise<unknown>) => secretFailure(promise, everySecret);

describe('secrets-manager engine through the AWS SDK', () => {
  it('reads a whole secret string, a key of a JSON secret, and a secret by ARN', async () => {
    const secrets = resolver();
    expect(await secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/driver-token`)).toBe(DRIVER_TOKEN);
    expect(await secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/db!k:password`)).toBe(DB_PASSWORD);
    expect(await secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/db!k:port`)).toBe('5432');
    expect(await secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:${arn}!k:password`)).toBe(DB_PASSWORD);
    expect(sm.requests.at(-1)).toEqual({ target: 'secretsmanager.GetSecretValue', secretId: arn, accessKeyId: CREDENTIALS.accessKeyId });
  });

  it('writes binary secrets and base64 keys to private files', async () => {
    const secrets = resolver();
    const blob = await secrets.resolveFile(`encryptedFile:secrets-manager!r:${REGION}!s:vendor/blob`);
    expect(readFileSync(blob).equals(BINARY)).toBe(true);
    const kubeconfig = await secrets.resolveFile(`encryptedFile:secrets-manager!r:${REGION}!s:vendor/db!k:kubeconfig!b:true`);
    expect(readFileSync(kubeconfig, 'utf8')).toBe(KUBECONFIG);
  });

  it('names the reference and AWS\'s reason for a missing, refused or retired secret', async () => {
    const secrets = resolver();
    const missingRef = `encrypted:secrets-manager!r:${REGION}!s:vendor/none`;
    const missing = await failure(secrets.resolve(missingRef));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe(`cannot resolve secret ${missingRef}: Secrets Manager answered ResourceNotFoundException: Secrets Manager can't find the specified secret.`);
    expect(missing.details).toEqual({ reference: missingRef, engine: 'secrets-manager' });

    const denied = await failure(secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/locked`));
    expect(denied.code).toBe('forbidden');
    expect(denied.message).toContain('AccessDeniedException');

    const retired = await failure(secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/retired`));
    expect(retired.code).toBe('conflict');
    expect(retired.message).toContain('marked for deletion');
  });

  it('reports a missing key, and a key asked of a secret that is not JSON, without its content', async () => {
    const secrets = resolver();
    const noKey = await failure(secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/db!k:user`));
    expect(noKey.code).toBe('not_found');
    expect(noKey.message).toContain('secret vendor/db has no key "user"');
    const notJson = await failure(secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/not-json!k:password`));
    expect(notJson.code).toBe('invalid_input');
    expect(notJson.message).toContain('secret vendor/not-json is not a JSON object');
    const binaryKey = await failure(secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/blob!k:password`));
    expect(binaryKey.message).toContain('is binary');
  });

  it('is refused with a wrong secret key, an unknown access key, or a signature for another region', async () => {
    const wrongKey = await failure(
      resolver({ secretsManager: { endpoint: sm.endpoint, credentials: { ...CREDENTIALS, secretAccessKey: 'wrong' }, maxAttempts: 1 } }).resolve(
        `encrypted:secrets-manager!r:${REGION}!s:vendor/db!k:password`,
      ),
    );
    expect(wrongKey.code).toBe('unauthenticated');
    expect(wrongKey.message).toContain('InvalidSignatureException: The request signature we calculated does not match');

    const unknownKey = await failure(
      resolver({ secretsManager: { endpoint: sm.endpoint, credentials: { ...CREDENTIALS, accessKeyId: 'AKIDUNKNOWN' }, maxAttempts: 1 } }).resolve(
        `encrypted:secrets-manager!r:${REGION}!s:vendor/db!k:password`,
      ),
    );
    expect(unknownKey.code).toBe('unauthenticated');
    expect(unknownKey.message).toContain('UnrecognizedClientException');

    // Each region gets its own client, signing for that region.
    const otherRegion = await failure(resolver().resolve('encrypted:secrets-manager!r:us-east-2!s:vendor/db!k:password'));
    expect(otherRegion.message).toContain('Credential should be scoped to a valid region');
  });

  it('finds the endpoint in VENDOR_SECRETS_MANAGER_ENDPOINT and credentials through the SDK chain', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    try {
      const secrets = resolver({ env: { VENDOR_SECRETS_MANAGER_ENDPOINT: sm.endpoint }, secretsManager: { maxAttempts: 1 } });
      expect(await secrets.resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/driver-token`)).toBe(DRIVER_TOKEN);
    } finally {
      for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_EC2_METADATA_DISABLED']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it('gives up on an endpoint that accepts the connection but never answers', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const error = await failure(
        resolver({ secretsManager: { endpoint, credentials: CREDENTIALS, maxAttempts: 1, timeoutMs: 100 } }).resolve(`encrypted:secrets-manager!r:${REGION}!s:vendor/db`),
      );
      expect(error.code).toBe('unavailable');
      expect(error.message).toMatch(/Secrets Manager answered TimeoutError/);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('reports an endpoint that does not answer as unavailable', async () => {
    const closed = await startSecretsManagerDouble({ region: REGION, credentials: CREDENTIALS });
    await closed.close();
    const error = await failure(
      resolver({ secretsManager: { endpoint: closed.endpoint, credentials: CREDENTIALS, maxAttempts: 1 } }).resolve(
        `encrypted:secrets-manager!r:${REGION}!s:vendor/db`,
      ),
    );
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/Secrets Manager answered \w+ \(ECONNREFUSED\)/);
  });
});
