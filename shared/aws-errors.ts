import { VendorError, type ErrorCode } from './errors.ts';

/**
 * An AWS SDK failure as our error: the AWS error names a caller can act on map to codes (the rest
 * count as unavailable). Service and credential errors carry AWS's own sentences, which name the
 * resource but never a secret; socket errors only their code.
 */
export function awsFailure(service: string, e: unknown, codes: Readonly<Record<string, ErrorCode>>): VendorError {
  const error = e as { name?: unknown; message?: unknown; code?: unknown; $fault?: unknown };
  const name = typeof error.name === 'string' ? error.name : 'Error';
  const code = codes[name] ?? 'unavailable';
  const fromAws = error.$fault !== undefined || name === 'CredentialsProviderError';
  const detail = fromAws && typeof error.message === 'string' ? `: ${error.message}` : typeof error.code === 'string' ? ` (${error.code})` : '';
  return new VendorError(code, `${service} answered ${name}${detail}`);
}
