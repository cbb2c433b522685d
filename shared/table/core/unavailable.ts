/**
 * Failures that mean the table is not answering now (throttled, overloaded, unreachable, too slow),
 * as opposed to a request the table refused for what it asked. The SDK has already retried these
 * (shared/table/core/client.ts); callers report them as `unavailable` and may try again later.
 */
const UNAVAILABLE_NAME = /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|ServiceUnavailable|InternalServerError|TimeoutError|AbortError/;
const UNAVAILABLE_CODE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/;
const THROTTLED_NAME = /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded/;

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

export function isTableUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as SdkErrorShape;
  const status = e.$metadata?.httpStatusCode;
  // A 5xx answer is the table's (or a gateway's in front of it) failure, whatever its body says:
  // an HTML page from a proxy fails to parse and arrives as a SyntaxError carrying that status.
  if (e.$fault === 'server' || (typeof status === 'number' && status >= 500)) return true;
  return UNAVAILABLE_NAME.test(String(e.name)) || UNAVAILABLE_CODE.test(String(e.code));
}

/** Throttling (the table answers, but not to this many requests): worth trying again soon. */
export function isTableThrottled(err: unknown): boolean {
  return typeof err === 'object' && err !== null && THROTTLED_NAME.test(String((err as SdkErrorShape).name));
}
