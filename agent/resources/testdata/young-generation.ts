/**
 * For decoder.test.ts: run with `--max-semi-space-size=2`, starts a thread the way decoding threads
 * start, makes short-lived garbage on both threads, and prints the size each one's young generation
 * grew to (MiB of new space), as JSON.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread, parentPort } from 'node:worker_threads';
import { startDecodingThread } from '../decoder.ts';

function newSpaceMbAfterGarbage(): number {
  let keep: unknown[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    keep.push({ i, s: `item-${i}` });
    if (keep.length > 200_000) keep = [];
  }
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size / 1048576;
}

if (isMainThread) {
  const thread = startDecodingThread(new URL(import.meta.url));
  const threadMb = await new Promise<number>((resolve) => thread.once('message', resolve));
  await thread.terminate();
  console.log(JSON.stringify({ thread: threadMb, main: newSpaceMbAfterGarbage() }));
} else {
  parentPort!.postMessage(newSpaceMbAfterGarbage());
}
