/**
 * The agent side of `npm run bench:cache`, in a process of its own: the resource cache worker of one
 * account over a real driver connection, caching the benchmark's kinds. Reports when every scope is
 * listed and acknowledged by the driver, and its memory.
 *
 *   node bench/cache-agent.ts '{"kubeconfig":"...","driver":"127.0.0.1:PORT","token":"...","account":"bench"}'
 */
import { EMPTY_SETTINGS } from '../agent/accounts/holder.ts';
import type { HeldAccountView, WorkerHost } from '../agent/accounts/account-worker.ts';
import { decoderOf } from '../agent/resources/decoder.ts';
import { ListGate } from '../agent/resources/list-gate.ts';
import { DEFAULT_TIMING } from '../agent/resources/reflector.ts';
import { DEFAULT_CACHE_TIMING } from '../agent/resources/cache-run.ts';
import { CacheWorker } from '../agent/resources/cache-worker.ts';
import { DEFAULT_RETRY_SETTINGS, connectCluster } from '../agent/clusters/index.ts';
import { DriverConnection } from '../agent/connection/connection.ts';
import { createAgentMetrics } from '../agent/observability/metrics.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger } from '../shared/log.ts';
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';
import { BENCH_KINDS, commands, peakRssBytes, report, settledMemory } from './cache-child.ts';

const cfg = JSON.parse(process.argv[2] ?? '{}') as { kubeconfig: string; driver: string; token: string; account: string };
const logger = createLogger({ level: 'warn' });
const cluster = await connectCluster(
  { account: cfg.account, kubeConfigFile: cfg.kubeconfig, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
  { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: DEFAULT_RETRY_SETTINGS, clock: systemClock, logger },
);
let worker: CacheWorker | undefined;
const connection = new DriverConnection({
  settings: { driver: { grpc: cfg.driver, insecure: true, auth: { token: cfg.token } } },
  hello: () => ({ agentId: 'bench-agent', zone: 'bench_bench', agentVersion: '0.1.0', staticAccounts: [], heldAccounts: [] }),
  onWork: (w) => worker?.handle(w),
  onState: (s) => {
    if (s.connected) worker?.connected();
  },
  log: logger,
});
const stopConnection = new AbortController();
const running = connection.start(stopConnection.signal);
const host: WorkerHost = { respond: (b) => connection.respond(b), notify: (b) => connection.notify(b), connected: () => connection.sessionId !== undefined };
const view: HeldAccountView = {
  name: cfg.account,
  generation: 1,
  settings: { ...EMPTY_SETTINGS, kinds: BENCH_KINDS.map((k) => k.kind) },
  caching: true,
  cachingEpoch: 1,
  cluster,
  logger,
};

const started = performance.now();
const decoder = decoderOf(view);
const metrics = createAgentMetrics();
worker = new CacheWorker(view, host, { clock: systemClock, random: Math.random, lists: new ListGate(4), decoder, metrics, timing: { ...DEFAULT_TIMING, ...DEFAULT_CACHE_TIMING } });
/** Full lists made so far: one per kind for the sync; any more mean a watch was lost beyond resuming. */
const relists = async () => (await metrics.relists.get()).values.reduce((n, v) => n + v.value, 0);
report({ event: 'started' });
for (;;) {
  const s = worker.run?.status();
  if (s !== undefined && s.scopes > 0 && s.synced === s.scopes && s.backlog === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
report({ event: 'synced', ms: performance.now() - started, peakRss: peakRssBytes(), rss: process.memoryUsage().rss, relists: await relists() });

/** Collections of the main thread's heap so far, by kind: they follow what is allocated and kept, not the machine's speed. */
const collections = { scavenges: 0, markCompacts: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === perf.NODE_PERFORMANCE_GC_MINOR) collections.scavenges++;
    else if (kind === perf.NODE_PERFORMANCE_GC_MAJOR) collections.markCompacts++;
  }
}).observe({ entryTypes: ['gc'] });

commands({
  gc: () => report({ event: 'gc', ...collections }),
  settle: async () => report({ event: 'settled', ...(await settledMemory()), peakRss: peakRssBytes() }),
  stop: async () => {
    const listed = await relists();
    await worker?.stop();
    await decoder.close();
    stopConnection.abort();
    await running;
    cluster.close();
    report({ event: 'stopped', peakRss: peakRssBytes(), cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000, relists: listed });
    process.exit(0);
  },
});
