import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { isVendorError, type ErrorCode } from '../shared/errors.ts';
import { ERROR_CODE_TRAILER, PROBLEM_SEQ_TRAILER, PROBLEM_TRAILER } from '../shared/protocol/wire.ts';

/** The one mapping from the project's error codes to gRPC status codes. */
const STATUS_OF_CODE: Record<ErrorCode, status> = {
  invalid_input: status.INVALID_ARGUMENT,
  payload_too_large: status.RESOURCE_EXHAUSTED,
  not_found: status.NOT_FOUND,
  unknown_account: status.NOT_FOUND,
  conflict: status.FAILED_PRECONDITION,
  precondition_failed: status.ABORTED,
  unauthenticated: status.UNAUTHENTICATED,
  forbidden: status.PERMISSION_DENIED,
  unavailable: status.UNAVAILABLE,
  timeout: status.DEADLINE_EXCEEDED,
  limit_exceeded: status.RESOURCE_EXHAUSTED,
  protocol_error: status.INVALID_ARGUMENT,
  internal: status.INTERNAL,
};

export function grpcStatusOf(code: ErrorCode): status {
  return STATUS_OF_CODE[code];
}

/**
 * The status that ends a call because of `error`. A `VendorError` keeps its message (which never
 * carries secrets) and its code in the trailers; anything else is reported as an internal error
 * without its text, which could reveal internals.
 */
export function statusOfError(error: unknown): StatusObject {
  const metadata = new Metadata();
  if (!isVendorError(error)) {
    metadata.set(ERROR_CODE_TRAILER, 'internal');
    return { code: status.INTERNAL, details: 'internal error', metadata };
  }
  metadata.set(ERROR_CODE_TRAILER, error.code);
  const problem = error.details['problem'];
  if (typeof problem === 'string') metadata.set(PROBLEM_TRAILER, problem);
  const seq = error.details['seq'];
  if (typeof seq === 'number') metadata.set(PROBLEM_SEQ_TRAILER, String(seq));
  return { code: grpcStatusOf(error.code), details: statusDetails(error.message), metadata };
}

/**
 * Longest status message sent. It travels as an HTTP/2 trailer, and a peer refuses trailers past its
 * header list size (grpc-js: 16 KiB), seeing a protocol error instead of the status: a refusal naming
 * thousands of a message's fields would reach an agent as a broken stream, not as the refusal.
 */
export const MAX_STATUS_DETAILS = 2000;

function statusDetails(message: string): string {
  return message.length <= MAX_STATUS_DETAILS ? message : `${message.slice(0, MAX_STATUS_DETAILS - 1)}…`;
}
