/**
 * Fails a test file that leaves a worker thread or a message port open. Files of the `shared-process`
 * project share a worker (docs/testing.md#how-the-files-run), so a thread left running works on, and
 * logs, in the files after it: an agent's decoding threads, never closed when it stopped, ran on for
 * up to a minute. Only ports and workers are counted: sockets and timers of servers that are closing
 * still show for a moment after a file that closed them properly, and would fail it by chance.
 */
import { afterAll } from 'vitest';

const THREAD_RESOURCES = new Set(['MessagePort', 'Worker']);

/** The worker threads and message ports that keep the process alive now. */
export function openPorts(resources: readonly string[] = process.getActiveResourcesInfo()): number {
  return resources.filter((r) => THREAD_RESOURCES.has(r)).length;
}

/**
 * How many ports beyond `before` are still open once those being closed have closed: a thread that
 * was told to end is gone within a few turns of the event loop, so it waits up to `settleMs` for them.
 */
export async function portsLeftOpen(before: number, settleMs = 5_000): Promise<number> {
  const until = Date.now() + settleMs;
  for (;;) {
    const extra = openPorts() - before;
    if (extra <= 0 || Date.now() >= until) return Math.max(0, extra);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const before = openPorts();
afterAll(async () => {
  const left = await portsLeftOpen(before);
  if (left > 0) {
    throw new Error(
      `this file left ${left} worker thread(s) or message port(s) open, which run on in the next files of this worker: ` +
        'end them in its teardown (worker.terminate(), port.close(), or close what started them)',
    );
  }
});
