/**
 * What code under test logged. `captureLogger` keeps the records in memory, parsed (pino's numeric
 * levels, the real redaction); `capturedLog` writes through the real logger factory, text format
 * included, so a test sees the very bytes an operator's log would hold.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createLogger, REDACTED_PATHS, type Logger } from '../shared/log.ts';

/** A logger whose records land in `lines` (parsed), with the same redaction as the real one. */
export function captureLogger(): { log: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug', base: {}, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) },
  );
  return { log, lines, text: () => lines.map((l) => JSON.stringify(l)).join('\n') };
}

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
