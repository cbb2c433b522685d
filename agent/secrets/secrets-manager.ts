import { GetSecretValueCommand, SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { awsFailure } from '../../shared/aws-errors.ts';
import { VendorError, type ErrorCode } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { SECRETS_MANAGER_ENDPOINT_ENV } from './config.ts';
import { storedValueBytes, type SecretEngine } from './engine.ts';

export interface SecretsManagerOptions {
  /** Endpoint of the service; VENDOR_SECRETS_MANAGER_ENDPOINT, then the SDK's regional default. */
  endpoint?: string;
  /** Credentials; the SDK's default chain (environment, web identity, instance role...) when absent. */
  credentials?: SecretsManagerClientConfig['credentials'];
  maxAttempts?: number;
  /** Time allowed to connect and for each answer; default 10 s. */
  timeoutMs?: number;
}

// AWS error names a caller can act on, by what they mean for us.
const AWS_ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  ResourceNotFoundException: 'not_found',
  AccessDeniedException: 'forbidden',
  DecryptionFailure: 'forbidden',
  UnrecognizedClientException: 'unauthenticated',
  InvalidSignatureException: 'unauthenticated',
  ExpiredTokenException: 'unauthenticated',
  CredentialsProviderError: 'unauthenticated',
  InvalidRequestException: 'conflict',
  InvalidParameterException: 'invalid_input',
};

/**
 * AWS Secrets Manager through the SDK, one client per region: `r` region, `s` name or ARN, `k` a
 * key of a secret stored as a JSON object (the whole SecretString or SecretBinary when absent).
 */
export function createSecretsManagerEngine(
  options: SecretsManagerOptions,
  deps: { env: Readonly<Record<string, string | undefined>>; logger: Logger },
): SecretEngine {
  const endpoint = options.endpoint ?? nonEmpty(deps.env[SECRETS_MANAGER_ENDPOINT_ENV]);
  const clients = new Map<string, SecretsManagerClient>();
  const client = (region: string) => {
    let found = clients.get(region);
    if (found === undefined) {
      found = new SecretsManagerClient({
        region,
        maxAttempts: options.maxAttempts ?? 3,
        requestHandler: { connectionTimeout: options.timeoutMs ?? 10_000, requestTimeout: options.timeoutMs ?? 10_000, throwOnRequestTimeout: true },
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      });
      clients.set(region, found);
      deps.logger.debug({ region, endpoint: endpoint ?? 'default' }, 'created secrets manager client');
    }
    return found;
  };

  return {
    async read(params) {
      const region = params.r ?? '';
      const secretId = params.s ?? '';
      const answer = await client(region)
        .send(new GetSecretValueCommand({ SecretId: secretId }))
        .catch((e: unknown) => {
          throw awsFailure('Secrets Manager', e, AWS_ERROR_CODES);
        });
      const key = params.k;
      if (key === undefined) return storedValueBytes(answer.SecretString ?? answer.SecretBinary ?? '', params.b === 'true');
      if (answer.SecretString === undefined) throw new VendorError('invalid_input', `secret ${secretId} is binary, so it has no key "${key}"`);
      const fields = parseObject(answer.SecretString);
      if (fields === undefined) throw new VendorError('invalid_input', `secret ${secretId} is not a JSON object, so it has no key "${key}"`);
      if (!Object.hasOwn(fields, key)) throw new VendorError('not_found', `secret ${secretId} has no key "${key}"`);
      return storedValueBytes(fields[key], params.b === 'true');
    },
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
