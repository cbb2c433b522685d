import { isVendorError, VendorError, type ErrorCode } from '../shared/errors.ts';
import { isTableThrottled, isTableUnavailable } from '../shared/table/core/unavailable.ts';

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
  limit_exceeded: 429,
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
  limit_exceeded: 'Limit exceeded',
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

/**
 * Turns anything thrown into a VendorError. A table that does not answer is `unavailable`; anything else
 * unexpected is `internal`, with a message that reveals nothing of the failure (it is logged instead).
 */
export function toVendorError(err: unknown): VendorError {
  if (isVendorError(err)) return err;
  if (isTableUnavailable(err)) return new VendorError('unavailable', 'the table is not answering; try again', { cause: err });
  return new VendorError('internal', 'unexpected error', { cause: err });
}

/** Seconds a client should wait before trying again after a throttled table. */
export const RETRY_AFTER_THROTTLED_SECONDS = 1;
/** Seconds a client should wait before trying again after any other outage (table or identity provider). */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5;

/**
 * The `Retry-After` of a 503 (RFC 9110 10.2.3): soon after throttling, which passes quickly; longer
 * when the table or the identity provider did not answer at all.
 */
export function retryAfterSeconds(err: VendorError): number | undefined {
  if (HTTP_STATUS[err.code] !== 503) return undefined;
  return isTableThrottled(err.cause) ? RETRY_AFTER_THROTTLED_SECONDS : RETRY_AFTER_UNAVAILABLE_SECONDS;
}

/** Most entries in `errors`; past it one more entry says how many were left out. */
export const MAX_PROBLEM_ERRORS = 100;
/** Longest `detail`, and longest `path` or `message` of one entry, in characters. */
const MAX_DETAIL = 2_000;
const MAX_ENTRY_TEXT = 300;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * The problem details of an error. Its size is bounded whatever the request held: a 1 MiB body of
 * bad elements must not earn a 60 MB answer (over Lambda's 6 MB limit, which would turn a 400 into a
 * gateway error), so `errors` keeps the first entries and counts the rest, and long texts are cut.
 */
export function toProblem(err: VendorError, instance?: string): Problem {
  const errors = err.issues.slice(0, MAX_PROBLEM_ERRORS).map((i) => ({ path: clip(i.path, MAX_ENTRY_TEXT), message: clip(i.message, MAX_ENTRY_TEXT) }));
  const more = err.issues.length - errors.length;
  if (more > 0) errors.push({ path: '', message: `${more} more problems not listed` });
  return {
    ...err.details,
    type: problemType(err.code),
    title: TITLES[err.code],
    status: HTTP_STATUS[err.code],
    detail: clip(err.message, MAX_DETAIL),
    code: err.code,
    errors,
    ...(instance === undefined ? {} : { instance: clip(instance, MAX_DETAIL) }),
  };
}
