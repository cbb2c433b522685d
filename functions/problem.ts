import { isVendorError, VendorError, type ErrorCode } from '../shared/errors.ts';

/** The one mapping from error codes to HTTP status. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_input: 400,
  payload_too_large: 413,
  not_found: 404,
  unknown_account: 400,
  conflict: 409,
  precondition_failed: 409,
  unauthenticated: 401,
  forbidden: 403,
  unavailable: 503,
  timeout: 504,
  protocol_error: 400,
  internal: 500,
};

const TITLES: Record<ErrorCode, string> = {
  invalid_input: 'Invalid input',
  payload_too_large: 'Request body too large',
  not_found: 'Not found',
  unknown_account: 'Not a driver-defined account',
  conflict: 'Conflict with the current state',
  precondition_failed: 'Changed concurrently',
  unauthenticated: 'Authentication required',
  forbidden: 'Forbidden',
  unavailable: 'Service unavailable',
  timeout: 'Timed out',
  protocol_error: 'Protocol error',
  internal: 'Internal error',
};

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 problem details, with the stable `code`, every bad element in `errors`, and the error's details. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors: { path: string; message: string }[];
  instance?: string;
  [extension: string]: unknown;
}

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 section 3): `error="invalid_token"` when
 * credentials were sent, never more about what was wrong with them.
 */
export function challengeFor(code: ErrorCode, credentialsSent: boolean): string | undefined {
  if (code !== 'unauthenticated') return undefined;
  return credentialsSent ? 'Bearer realm="vendor-agent", error="invalid_token"' : 'Bearer realm="vendor-agent"';
}

export function problemType(code: ErrorCode): string {
  return `urn:vendor-agent:problem:${code}`;
}

const THROTTLING = /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|ServiceUnavailable|InternalServerError|ECONNREFUSED|ECONNRESET|ETIMEDOUT|TimeoutError/;

/**
 * Turns anything thrown into a VendorError. A table that does not answer is `unavailable`; anything else
 * unexpected is `internal`, with a message that reveals nothing of the failure (it is logged instead).
 */
export function toVendorError(err: unknown): VendorError {
  if (isVendorError(err)) return err;
  const name = (err as { name?: unknown; code?: unknown } | null)?.name;
  const code = (err as { code?: unknown } | null)?.code;
  if (THROTTLING.test(String(name)) || THROTTLING.test(String(code))) {
    return new VendorError('unavailable', 'the table is not answering; try again', { cause: err });
  }
  return new VendorError('internal', 'unexpected error', { cause: err });
}

export function toProblem(err: VendorError, instance?: string): Problem {
  return {
    ...err.details,
    type: problemType(err.code),
    title: TITLES[err.code],
    status: HTTP_STATUS[err.code],
    detail: err.message,
    code: err.code,
    errors: err.issues.map((i) => ({ path: i.path, message: i.message })),
    ...(instance === undefined ? {} : { instance }),
  };
}
