/**
 * Loaded (`--import`) into every process the scenario starts: the process ends when the scenario's
 * end of its stdin closes, so a scenario that dies (a test runner killing its worker on a timeout)
 * leaves no driver or agent running behind it. It says so first, so that an end by the tether is told
 * apart from a kill that came from elsewhere.
 *
 * Worker threads run `--import` modules too, and a worker's `process.stdin` is a stream of its own
 * that ends at once; the agent's decoding threads would end the whole agent through it. Only the
 * main thread watches stdin.
 */
import { isMainThread } from 'node:worker_threads';

const end = (why: string) => {
  process.stderr.write(`tether: ${why}; the process ends\n`);
  process.kill(process.pid, 'SIGKILL');
};
if (isMainThread) {
  process.stdin.on('end', () => end('stdin ended'));
  process.stdin.on('error', (e: Error) => end(`stdin failed: ${e.message}`));
  process.stdin.resume();
}
