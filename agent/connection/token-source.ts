/**
 * The bearer token the agent presents when it opens a stream: `driver.auth.token` as given, or the
 * output of `driver.auth.tokenCommand`, run when first needed, every `refreshIntervalSeconds` when
 * that is set, and again after the driver refuses the token. A failing command is reported and
 * retried; it never stops the agent. The token itself is never logged, nor the command's output.
 */
import { execFile } from 'node:child_process';
import * as v from 'valibot';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { DriverSettings, TokenCommandSettings } from './settings.ts';

const COMMAND_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 64 * 1024;

const JsonToken = v.object({ token: v.pipe(v.string(), v.nonEmpty()) });

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

/** Runs the command and returns the token it printed; every failure is an `unavailable` error. */
export function runTokenCommand(cmd: TokenCommandSettings): Promise<string> {
  const name = `driver.auth.tokenCommand (${cmd.command})`;
  return new Promise((resolve, reject) => {
    execFile(
      cmd.command,
      cmd.args ?? [],
      { timeout: COMMAND_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error) {
          const e = error as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
          const why =
            typeof e.code === 'number'
              ? `exited with code ${e.code}${stderr.trim() ? `: ${firstLine(stderr)}` : ''}`
              : e.killed
                ? `did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`
                : `could not run: ${e.code ?? 'error'}`;
          reject(new VendorError('unavailable', `${name} ${why}`));
          return;
        }
        if ((cmd.format ?? '') === 'raw') {
          const token = stdout.trim();
          if (token === '' || /\s/.test(token)) {
            reject(new VendorError('unavailable', `${name} printed ${token === '' ? 'no token' : 'more than one word'}`));
            return;
          }
          resolve(token);
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(stdout);
        } catch {
          parsed = undefined;
        }
        const result = v.safeParse(JsonToken, parsed);
        if (!result.success) {
          reject(new VendorError('unavailable', `${name} did not print a JSON object with a non-empty string attribute "token"`));
          return;
        }
        resolve(result.output.token);
      },
    );
  });
}

export class TokenSource {
  readonly #auth: DriverSettings['auth'];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #retryMs: number;
  #token: string | undefined;
  #running: Promise<string> | undefined;

  constructor(auth: DriverSettings['auth'], deps: { clock: Clock; log: Logger; retryMs: number }) {
    if (auth?.token !== undefined && auth.tokenCommand !== undefined) {
      throw new VendorError('invalid_input', 'driver.auth.token and driver.auth.tokenCommand cannot both be set', {
        issues: [{ path: 'driver.auth', message: 'set token or tokenCommand, not both' }],
      });
    }
    this.#auth = auth;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#retryMs = deps.retryMs;
  }

  /** Keeps the token fresh in the background while `signal` lives, when a refresh interval is set. */
  start(signal: AbortSignal): void {
    const cmd = this.#auth?.tokenCommand;
    const intervalMs = (cmd?.refreshIntervalSeconds ?? 0) * 1000;
    if (cmd === undefined || intervalMs <= 0) return;
    void (async () => {
      let wait = intervalMs;
      for (;;) {
        try {
          await this.#clock.sleep(wait, signal);
        } catch {
          return;
        }
        try {
          await this.#refresh();
          wait = intervalMs;
        } catch {
          wait = Math.min(intervalMs, this.#retryMs);
        }
      }
    })();
  }

  /** The token for the next stream, or undefined when none is configured. */
  async token(): Promise<string | undefined> {
    if (this.#auth?.token !== undefined) return this.#auth.token;
    if (this.#auth?.tokenCommand === undefined) return undefined;
    return this.#token ?? this.#refresh();
  }

  /** Forgets a command token the driver refused, so the next stream runs the command again. */
  invalidate(): void {
    this.#token = undefined;
  }

  #refresh(): Promise<string> {
    const cmd = this.#auth?.tokenCommand;
    if (cmd === undefined) return Promise.reject(new VendorError('internal', 'no token command'));
    this.#running ??= runTokenCommand(cmd)
      .then(
        (token) => {
          this.#token = token;
          this.#log.debug({ command: cmd.command }, 'driver token refreshed');
          return token;
        },
        (e: unknown) => {
          this.#log.warn({ command: cmd.command }, `driver token command failed, will retry: ${(e as Error).message}`);
          throw e;
        },
      )
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }
}
