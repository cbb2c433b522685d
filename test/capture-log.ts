import pino from 'pino';
import type { Logger } from '../shared/log.ts';
import { REDACTED_PATHS } from '../shared/log.ts';

/** A logger whose records land in `lines` (parsed), with the same redaction as the real one. */
export function captureLogger(): { log: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug', base: {}, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) },
  );
  return { log, lines, text: () => lines.map((l) => JSON.stringify(l)).join('\n') };
}
