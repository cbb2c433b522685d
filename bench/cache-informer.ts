/**
 * The baseline of `npm run bench:cache`, in a process of its own: one `@kubernetes/client-node`
 * informer per kind over the same API server, started together. Reports when every informer has
 * synced, its memory, and (on `count N`) when it has seen N more updates.
 *
 *   node bench/cache-informer.ts <kubeconfig>
 */
import { KubeConfig, makeInformer } from '@kubernetes/client-node';
import { BENCH_KINDS, commands, peakRssBytes, report, settledMemory } from './cache-child.ts';
import { informerLists } from './density-informers.ts';

const kc = new KubeConfig();
kc.loadFromFile(process.argv[2] ?? '');
const lists = informerLists(kc);

let updates = 0;
let waiting: { target: number; since: number; from: number } | undefined;
const started = performance.now();
const informers = BENCH_KINDS.map(({ kind, path }) => {
  const informer = makeInformer(kc, path, lists[kind] as never);
  informer.on('update', () => {
    updates++;
    if (waiting !== undefined && updates - waiting.from >= waiting.target) {
      report({ event: 'counted', events: updates - waiting.from, ms: performance.now() - waiting.since });
      waiting = undefined;
    }
  });
  informer.on('error', (e: unknown) => report({ event: 'informer-error', kind, message: String(e) }));
  return informer;
});
await Promise.all(informers.map((i) => i.start()));
const objects = informers.reduce((n, i) => n + i.list().length, 0);
report({ event: 'synced', ms: performance.now() - started, objects, peakRss: peakRssBytes(), rss: process.memoryUsage().rss });

commands({
  count: (n) => {
    waiting = { target: Number(n), since: performance.now(), from: updates };
  },
  settle: async () => report({ event: 'settled', ...(await settledMemory()), peakRss: peakRssBytes() }),
  stop: () => {
    for (const i of informers) void i.stop();
    report({ event: 'stopped', peakRss: peakRssBytes() });
    process.exit(0);
  },
});
