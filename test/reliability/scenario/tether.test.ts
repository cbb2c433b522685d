import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

const TETHER = new URL('./tether.ts', import.meta.url).href;

// A process that starts a worker thread (as the agent's decoders do) and says when the thread has run.
const PROGRAM = `
import { Worker } from 'node:worker_threads';
const w = new Worker('setTimeout(() => {}, 50)', { eval: true });
w.on('exit', () => process.stdout.write('worker done\\n'));
setInterval(() => {}, 1000);
`;

function start() {
  const child = spawn(process.execPath, ['--import', TETHER, '--input-type=module', '-e', PROGRAM], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { child, out: () => out, err: () => err };
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

describe('scenario tether', () => {
  it('keeps a process with worker threads alive while its stdin is open', async () => {
    const p = start();
    const exit = once(p.child, 'exit');
    // Until the worker has run and ended, or the process is gone.
    await until(() => p.out().includes('worker done') || p.child.exitCode !== null || p.child.signalCode !== null);
    await new Promise((r) => setTimeout(r, 200));
    expect(p.err()).not.toContain('tether');
    expect(p.child.exitCode).toBeNull();
    expect(p.child.signalCode).toBeNull();
    p.child.stdin.end();
    const [, signal] = await exit;
    expect(signal).toBe('SIGKILL');
    expect(p.err()).toContain('tether: stdin ended; the process ends');
  });
});
