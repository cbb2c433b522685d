/**
 * How `vendorctl` fails, and the exit code of each way (docs/cli.md#exit-codes). Both kinds are
 * VendorErrors: a usage error is marked as such, everything else comes from the API or reaching it.
 */
import { isVendorError, VendorError, type Issue } from '../shared/errors.ts';

export const EXIT = {
  done: 0,
  /** An operation that ended FAILED or TIMED_OUT, or had not finished when `--wait` ran out. */
  operationFailed: 1,
  usage: 2,
  api: 3,
} as const;

export function usageError(message: string, issues: readonly Issue[] = []): VendorError {
  return new VendorError('invalid_input', message, { issues, details: { usage: true } });
}

export function isUsageError(e: unknown): e is VendorError {
  return isVendorError(e) && e.details.usage === true;
}

/** The lines printed to stderr for an error: the message, then each problem by path. */
export function describeError(e: unknown): string {
  if (!isVendorError(e)) return `error: ${e instanceof Error ? e.message : String(e)}\n`;
  const lines = [`error: ${e.message}`, ...e.issues.map((i) => `  ${i.path || '(body)'}: ${i.message}`)];
  const names = e.details.names;
  if (Array.isArray(names) && names.length > 0) lines.push(`  names: ${names.join(', ')}`);
  if (typeof e.details.operationId === 'string') lines.push(`  operation: ${e.details.operationId}`);
  return `${lines.join('\n')}\n`;
}
