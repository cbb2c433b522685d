/**
 * Credentials the agent obtains itself rather than through client-node: exec credential plugins and
 * the gcp auth provider (docs/agent-config.md, "Cluster credentials"). Both cache what they obtained,
 * obtain it again ahead of its expiry, run one command or token request at a time however many
 * requests need it, and start over when the API server refuses what they gave (401).
 */
import { spawn } from 'node:child_process';
import type { RequestOptions } from 'node:https';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';

export interface Credentials {
  /** Adds the credential (a bearer token, or a client certificate and key) to a request. */
  apply(opts: RequestOptions): Promise<void>;
  /** The API server refused the credential: the next request obtains a fresh one. */
  invalidate(): void;
}

export interface Obtained {
  token?: string;
  cert?: string;
  key?: string;
  /** ms; undefined when it does not expire. */
  expiresAt?: number;
}

/**
 * Refreshed this long before expiry: a fifth of the credential's lifetime, at most a minute, so a
 * request never leaves with a credential about to lapse on its way and a short-lived one is not
 * refreshed on every request.
 */
export function refreshAt(obtainedAt: number, expiresAt: number): number {
  return expiresAt - Math.min(60_000, Math.max(0, (expiresAt - obtainedAt) / 5));
}

/** Caches what `obtain` gives until its refresh time; one `obtain` at a time. */
export class CachedCredentials implements Credentials {
  readonly #obtain: () => Promise<Obtained>;
  readonly #clock: Clock;
  #current: { value: Obtained; refreshAt: number } | undefined;
  #pending: Promise<Obtained> | undefined;

  constructor(obtain: () => Promise<Obtained>, clock: Clock) {
    this.#obtain = obtain;
    this.#clock = clock;
  }

  async get(): Promise<Obtained> {
    const current = this.#current;
    if (current !== undefined && this.#clock.now() < current.refreshAt) return current.value;
    if (this.#pending === undefined) {
      const startedAt = this.#clock.now();
      this.#pending = this.#obtain()
        .then((value) => {
          this.#current = { value, refreshAt: value.expiresAt === undefined ? Infinity : refreshAt(startedAt, value.expiresAt) };
          return value;
        })
        .finally(() => (this.#pending = undefined));
    }
    return this.#pending;
  }

  async apply(opts: RequestOptions): Promise<void> {
    const c = await this.get();
    if (c.token !== undefined) opts.headers = { ...opts.headers, authorization: `Bearer ${c.token}` };
    if (c.cert !== undefined) opts.cert = c.cert;
    if (c.key !== undefined) opts.key = c.key;
  }

  invalidate(): void {
    this.#current = undefined;
  }
}

export interface CommandResult {
  stdout: string;
}

/**
 * Runs a credential command without a shell. Failures name the command, its exit code and the first
 * line of its stderr; never its output, which holds the credential.
 */
export function runCredentialCommand(
  what: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 30_000,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes <= 1024 * 1024) out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e: NodeJS.ErrnoException) => reject(new VendorError('unauthenticated', `${what} ${command} could not run: ${e.code ?? e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve({ stdout: Buffer.concat(out).toString('utf8') });
        return;
      }
      const firstLine = Buffer.concat(err).toString('utf8').split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 200);
      const how = signal !== null ? `was stopped by ${signal}` : `exited with code ${code}`;
      reject(new VendorError('unauthenticated', `${what} ${command} ${how}${firstLine ? `: ${firstLine}` : ''}`));
    });
  });
}
