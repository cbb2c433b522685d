/**
 * The one error type of the project. Every failure a caller can act on carries a stable
 * string code; HTTP status and gRPC status are derived from the code in exactly one place each
 * (functions/problem.ts and driver/grpc-status.ts), never chosen at the throw site.
 */
export const ERROR_CODES = [
  'invalid_input', // a request or file failed validation
  'payload_too_large',
  'not_found',
  'unknown_account', // a name that is not a driver-defined account
  'conflict', // state does not allow the operation (e.g. no live agent session)
  'precondition_failed', // a conditional write lost a race and the caller may retry
  'unauthenticated',
  'forbidden',
  'unavailable', // a dependency (table, cluster, driver) is not answering
  'timeout',
  'limit_exceeded', // a cap on what one caller may hold at once (agent streams) is reached
  'protocol_error', // a peer broke the agent protocol
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** `value` when it is one of the codes above, else undefined: for a code that comes from a peer. */
export function errorCodeOf(value: string): ErrorCode | undefined {
  return ERROR_CODES.find((c) => c === value);
}

/** One bad element of an input, addressed by a path such as `[2].zoneId` or `kubernetes.accounts[0].name`. */
export interface Issue {
  path: string;
  message: string;
}

export class VendorError extends Error {
  readonly code: ErrorCode;
  readonly issues: readonly Issue[];
  /** Extra, non-secret facts for the caller, e.g. `{ names: [...] }` for unknown accounts. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { issues?: readonly Issue[]; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VendorError';
    this.code = code;
    this.issues = options.issues ?? [];
    this.details = options.details ?? {};
  }
}

export function isVendorError(value: unknown): value is VendorError {
  return value instanceof VendorError;
}
