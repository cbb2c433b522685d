import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isVendorError, type VendorError } from '../../shared/errors.ts';
import { createLogger, type Logger } from '../../shared/log.ts';

/**
 * A trace-level logger writing through the project's real logger factory to a file, so tests can
 * scan everything the secret code logged for values that must never appear there.
 */
export function capturedLog(format: 'json' | 'text' = 'json'): { logger: Logger; text(): string; remove(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'secrets-log-'));
  const file = join(folder, 'log');
  const logger = createLogger({ level: 'trace', format, file, base: { component: 'secrets-test' } });
  return {
    logger,
    text: () => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    },
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}

/** The secret values found in `text`, for an assertion that it is empty. */
export function leakedSecrets(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s !== '' && text.includes(s));
}

/**
 * The VendorError a promise rejects with, after checking that neither its message nor its details
 * carry any of `secrets`.
 */
export async function secretFailure(promise: Promise<unknown>, secrets: Iterable<string>): Promise<VendorError> {
  try {
    await promise;
  } catch (e) {
    if (!isVendorError(e)) throw e;
    const leaked = leakedSecrets(`${e.message} ${JSON.stringify(e.details)}`, secrets);
    if (leaked.length > 0) throw new Error(`an error carried ${leaked.length} secret value(s)`);
    return e;
  }
  throw new Error('expected the promise to fail');
}
