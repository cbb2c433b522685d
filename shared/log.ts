import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a log object. Secrets should never be handed to a
 * logger at all; this is the second line of defence for the field names that carry them.
 */
export const REDACTED_PATHS = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'kubeconfig',
  '*.kubeconfig',
  'clientKeyFilePassword',
  '*.clientKeyFilePassword',
  'keyPassword',
  '*.keyPassword',
];

export interface LogOptions {
  level?: LevelWithSilent;
  format?: 'text' | 'json';
  /** File path; stdout when absent. `stdout` and `stderr` name those streams. */
  file?: string;
  /** Fields carried by every line (component, agentId, ...). */
  base?: Record<string, unknown>;
  /** Called for every child logger made from this one, at any depth (e.g. to change levels later). */
  onChild?: (child: Logger) => void;
}

function destinationOf(file: string | undefined): string | number {
  if (file === undefined || file === 'stdout') return 1;
  if (file === 'stderr') return 2;
  return file;
}

/**
 * One logger factory for the driver, the API and the agent. `text` is a single readable line per
 * record written synchronously (no worker thread), so it works the same inside Lambda and a container.
 */
export function createLogger(options: LogOptions = {}): Logger {
  const destination = pino.destination({ dest: destinationOf(options.file), sync: true, mkdir: true });
  const format = options.format ?? 'json';
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ?? {},
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(format === 'text' ? { messageKey: 'msg' } : {}),
      ...(options.onChild === undefined ? {} : { onChild: options.onChild }),
    },
    format === 'text' ? textStream(destination) : destination,
  );
}

/** Turns pino's JSON records into `time LEVEL msg key=value ...` lines. */
function textStream(out: { write(chunk: string): unknown }): { write(chunk: string): void } {
  return {
    write(chunk: string) {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(chunk) as Record<string, unknown>;
      } catch {
        out.write(chunk);
        return;
      }
      const { time, level, msg, ...rest } = rec;
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
        .join(' ');
      out.write(`${String(time)} ${String(level).toUpperCase()} ${String(msg ?? '')}${fields ? ' ' + fields : ''}\n`);
    },
  };
}

/** A logger that writes nothing, for tests and benchmarks that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
