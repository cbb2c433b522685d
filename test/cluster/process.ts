import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** A child process whose output goes to a log file, and whose last lines explain a failure. */
export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<number | null>;
  /** The last few kilobytes of its output, for error messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const TAIL_BYTES = 4096;
const running = new Set<ChildProcess>();

// Children must not outlive a test worker that exits without running its cleanup hooks.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startProcess(name: string, command: string, args: string[], logFile: string): ManagedProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let recent = '';
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    recent = (recent + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (err) => {
      recent += `\n${name} could not start: ${err.message}`;
      running.delete(child);
      resolve(null);
    });
    child.once('exit', (code) => {
      running.delete(child);
      log.end();
      resolve(code);
    });
  });
  return {
    name,
    child,
    exited,
    tail: () => recent,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null || !running.has(child)) return;
      child.kill('SIGTERM');
      const timer = delay(graceMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited, timer])) === 'timeout') child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A loopback port that was free a moment ago (the process that binds it may still lose a race). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `probe` every `intervalMs` until it returns true; fails early when the process exits and
 * with the process's last output when `timeoutMs` passes.
 */
export async function waitUntilReady(
  proc: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${proc.name} exited before it was ready:\n${proc.tail()}`);
    if (await probe().catch(() => false)) return;
    await delay(intervalMs);
  }
  throw new Error(`${proc.name} was not ready within ${timeoutMs} ms:\n${proc.tail()}`);
}
