/**
 * Errors from a cluster API server, as `VendorError`s: the code says what a caller can do about it,
 * `details.status` keeps the HTTP status (410 Gone drives a relist), `details.reason` the Kubernetes
 * Status reason. Messages carry the server's own Status message, which never holds credentials.
 */
import { VendorError, isVendorError, type ErrorCode } from '../../shared/errors.ts';

export interface KubeStatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

function codeForStatus(status: number): ErrorCode {
  if (status === 400 || status === 422) return 'invalid_input';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 410 || status === 412) return 'precondition_failed';
  if (status === 413) return 'payload_too_large';
  if (status === 408 || status === 504) return 'timeout';
  return 'unavailable';
}

function parseStatus(body: Buffer): KubeStatusBody | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as KubeStatusBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The error for a non-2xx answer to `method path`. */
export function kubeHttpError(account: string, method: string, path: string, status: number, body: Buffer): VendorError {
  const parsed = parseStatus(body);
  const said = parsed?.message ?? body.toString('utf8').slice(0, 300).trim();
  const message = `${method} ${path} on the cluster of account ${account}: ${status}${said ? ` ${said}` : ''}`;
  return new VendorError(codeForStatus(status), message, {
    details: {
      status,
      ...(parsed?.reason ? { reason: parsed.reason } : {}),
      ...(parsed?.details === undefined ? {} : { statusDetails: parsed.details }),
      // The server's own words, for reports that quote them without our prefix.
      ...(said ? { serverMessage: said } : {}),
    },
  });
}

/** The error for a request that got no answer (refused, reset, TLS failure, timeout). */
export function kubeTransportError(account: string, method: string, path: string, cause: unknown): VendorError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const timedOut = /timeout|timed out/i.test(reason);
  return new VendorError(timedOut ? 'timeout' : 'unavailable', `${method} ${path} on the cluster of account ${account}: ${reason}`, { cause, details: { [TRANSPORT]: true } });
}

const TRANSPORT = 'noAnswer';

/** Whether `error` is a request that got no answer from the API server (`kubeTransportError`). */
export function isKubeTransportError(error: unknown): boolean {
  return isVendorError(error) && error.details[TRANSPORT] === true;
}

/** The HTTP status of an API server answer carried by `error`, if it was one. */
export function kubeErrorStatus(error: unknown): number | undefined {
  if (!isVendorError(error)) return undefined;
  const status = error.details['status'];
  return typeof status === 'number' ? status : undefined;
}

const UNUSABLE = 'kubeconfigUnusable';

/** The error for an account whose cluster configuration could not be loaded, before any request. */
export function kubeconfigUnusable(account: string, cause: unknown): VendorError {
  // Only our own messages are written not to quote a kubeconfig's contents.
  const message = isVendorError(cause) ? cause.message : `account ${account}: the cluster configuration cannot be loaded (${cause instanceof Error ? cause.name : typeof cause})`;
  return new VendorError(isVendorError(cause) ? cause.code : 'invalid_input', message, { cause, details: { [UNUSABLE]: true } });
}

/**
 * The error for credentials the kubeconfig's user could not give (an exec plugin or token file that
 * failed). It counts as an unusable kubeconfig: the plugin's own words stay in the agent's log.
 */
export function credentialsUnavailable(account: string, cause: unknown): VendorError {
  // Exec plugins and token files fail here; their messages name the command or file, not a token.
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new VendorError('unauthenticated', `account ${account}: cannot obtain credentials: ${reason}`, { cause, details: { [UNUSABLE]: true } });
}

/** Whether `error` says an account's kubeconfig could not be used (`kubeconfigUnusable`, `credentialsUnavailable`). */
export function isKubeconfigUnusable(error: unknown): boolean {
  return isVendorError(error) && error.details[UNUSABLE] === true;
}
