/**
 * Names both ends of the stream agree on outside the messages themselves: the header carrying the
 * agent's bearer token, and the trailers the driver adds to an error status so the agent can act on
 * the error's stable code rather than on its text.
 */
export const AUTHORIZATION_HEADER = 'authorization';
/** The `VendorError` code behind a non-OK status. */
export const ERROR_CODE_TRAILER = 'vendor-error-code';
/** For protocol errors: which rule was broken (see `ProtocolProblem`). */
export const PROBLEM_TRAILER = 'vendor-protocol-problem';
/** For protocol errors caused by one reliable message: its sequence number. */
export const PROBLEM_SEQ_TRAILER = 'vendor-protocol-seq';

export function bearerHeaderValue(token: string): string {
  return `Bearer ${token}`;
}

/** The token of an `authorization` header value, or undefined when it is not a bearer token. */
export function bearerToken(headerValue: string): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(headerValue);
  return match?.[1];
}
