/**
 * `npm run bench:cache`: the resource cache at cluster scale, beside a baseline in the same run.
 *
 * The test API server runs in a process of its own, seeded with BENCH_OBJECTS (50,000) realistic
 * objects of 10 kinds over 50 namespaces; the table (dynalite) in another, as DynamoDB is a service of
 * its own (at the lowest CPU priority, so it does not take CPU from what is measured). This process
 * runs the driver, and counts the bytes its HTTP/2 connections read from the agent.
 * Then, one after the other:
 *
 * - the baseline: a process with one `@kubernetes/client-node` informer per kind;
 * - the agent: a process with the cache worker of one account caching the same kinds.
 *
 * Each syncs BENCH_ROUNDS (3) times, alternating (a fresh account and process each round: medians are
 * reported); after its sync each settles (full GC, pause) and takes BENCH_EVENTS (100,000) pod
 * updates made by the API server, so the bursts alternate too (informers, agent, informers, ...) and
 * the watch figure is the median of the rounds' ratios. Memory is the last round's
 * (BENCH_PROFILE_DIR=dir writes CPU profiles of the last agent and the API server there).
 * Before the rounds, the same burst goes to a watch that only counts lines: what the API server can
 * send at all.
 * One JSON line per figure: initial sync, peak and settled RSS, bytes to the driver, events per
 * second end to end into the driver beside the API server's ceiling, table writes per second and lag,
 * write units per changed object.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RETRY_SETTINGS, connectCluster, type ClusterClient } from '../agent/clusters/index.ts';
import { parseDriverGrpcConfig } from '../driver/config.ts';
import type { CacheHandlers } from '../driver/resources/handlers.ts';
import { resourcesModuleWith } from '../driver/resources/module.ts';
import { startDriver } from '../driver/server.ts';
import { systemClock } from '../shared/clock.ts';
import { silentLogger } from '../shared/log.ts';
import { createAccount, updateAccount } from '../shared/table/accounts/records.ts';
import { CapacityMeter } from '../shared/table/core/capacity.ts';
import { createDocumentClient } from '../shared/table/core/client.ts';
import { PK_PREFIX } from '../shared/table/core/keys.ts';
import { burstFigure, medianOf } from './cache-bursts.ts';
import { BENCH_KINDS } from './cache-child.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 50_000);
const NAMESPACES = Number(process.env.BENCH_NAMESPACES ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ACCOUNT = 'bench';
/** What `NODE_OPTIONS` holds in the agent's image and `npm run agent` passes. */
const AGENT_NODE_FLAGS = ['--max-semi-space-size=2'];
const TOKEN = 'bench-cache-token-0001';
const HERE = dirname(fileURLToPath(import.meta.url));

type Line = Record<string, unknown> & { event?: string };

function emit(figure: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ bench: 'cache', figure, value: Math.round(value * 100) / 100, unit, ...extra })}\n`);
}

/** A child process whose stdout lines are JSON reports. */
class Child {
  readonly process: ChildProcess;
  readonly #lines: Line[] = [];
  readonly #waiters: (() => void)[] = [];
  #exited = false;

  constructor(args: string[]) {
    this.process = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.process.stdout! }).on('line', (l) => {
      try {
        this.#lines.push(JSON.parse(l) as Line);
      } catch {
        process.stderr.write(`${l}\n`);
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.process.on('exit', () => {
      this.#exited = true;
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  /** The next report with `event` (or the first line when undefined), in order. */
  async next(event?: string): Promise<Line> {
    for (;;) {
      const i = this.#lines.findIndex((l) => event === undefined || l.event === event);
      if (i >= 0) return this.#lines.splice(i, 1)[0]!;
      const failed = this.#lines.find((l) => l.event === 'error' || l.event === 'informer-error');
      if (failed !== undefined) throw new Error(`child failed: ${JSON.stringify(failed)}`);
      if (this.#exited) throw new Error(`child exited while waiting for ${event ?? 'a line'}`);
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** Resolves once the process has exited. */
  async exited(): Promise<void> {
    while (!this.#exited) await new Promise<void>((r) => this.#waiters.push(r));
  }

  send(command: string): void {
    this.process.stdin!.write(`${command}\n`);
  }

  kill(): void {
    this.process.stdin?.destroy();
    if (!this.#exited) this.process.kill('SIGTERM');
  }
}

/** Counts the bytes agents send to the driver on `port`: what its HTTP/2 connections read. */
function countBytesTo(port: () => number): { bytes(): number; stop(): void } {
  // A session's socket can no longer be read once the session has closed: the last count is kept.
  const sockets = new Map<Socket, number>();
  const onStream = (message: unknown) => {
    const socket = (message as { stream: ServerHttp2Stream }).stream.session?.socket as Socket | undefined;
    if (socket !== undefined && socket.localPort === port() && !sockets.has(socket)) sockets.set(socket, 0);
  };
  subscribe('http2.server.stream.created', onStream);
  const bytes = () => {
    let n = 0;
    for (const [socket, last] of sockets) {
      try {
        sockets.set(socket, socket.bytesRead);
      } catch {
        // closed: keep `last`
      }
      n += sockets.get(socket) ?? last;
    }
    return n;
  };
  return { bytes, stop: () => unsubscribe('http2.server.stream.created', onStream) };
}

/** CPU time (user + system) a process has used, in ms, where /proc tells (Linux); else NaN. */
async function cpuMsOf(pid: number): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/**
 * CPU time (ms) of a process's threads by thread name (Linux: the main thread is the process's name,
 * a worker thread `WorkerThread`, V8's helpers `V8 DefaultWorke`, libuv's pool `libuv-worker`);
 * empty elsewhere. Threads that ended are not counted.
 */
async function cpuMsByThread(pid: number): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      try {
        const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
        byName.set(name, (byName.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux, or the process ended
  }
  return byName;
}

async function churn(kube: ClusterClient, count: number): Promise<number> {
  const t = performance.now();
  // Paced: the API server makes the updates no faster than its slowest watcher reads them, so no
  // side is dropped as a slow watcher (a dropped informer relists, and its relist would count).
  await kube.request({ method: 'POST', path: '/_test/churn', body: { count, batch: 1000, paced: true }, retry: false });
  return performance.now() - t;
}

const dir = await mkdtemp(join(tmpdir(), 'bench-cache-'));
const cleanups: (() => unknown)[] = [];
try {
  // ---- the API server, seeded, in its own process ----
  const kubeconfig = join(dir, 'kubeconfig');
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profileArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const kubeProcess = new Child([...profileArgs, join(HERE, '../test/kube/main.ts'), '--seed', String(OBJECTS), '--namespaces', String(NAMESPACES), '--tls', '--kubeconfig', kubeconfig]);
  cleanups.push(() => kubeProcess.kill());
  const ready = await kubeProcess.next();
  emit('seeded', OBJECTS, 'objects', { namespaces: NAMESPACES, kinds: ready.seeded, seed_ms: ready.seedMs });
  const kube = await connectCluster(
    { account: 'bench', kubeConfigFile: kubeconfig, context: '', serviceAccount: false, insecure: false, noProxy: true, oAuthScopes: [] },
    { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: DEFAULT_RETRY_SETTINGS, clock: systemClock, logger: silentLogger() },
  );
  cleanups.push(() => kube.close());
  // Warm the server up (its JIT and caches) so the first measured run is not penalized.
  for (const { path } of BENCH_KINDS) {
    let cont: string | undefined;
    do {
      const page = (await kube.request({ path, query: { limit: 500, continue: cont } })).json<{ metadata: { continue?: string } }>();
      cont = page.metadata.continue || undefined;
    } while (cont !== undefined);
  }

  // ---- the table and the driver (in this process) ----
  const tableProcess = new Child([join(HERE, 'table-process.ts')]);
  cleanups.push(() => tableProcess.kill());
  // DynamoDB is a remote service; on this machine its stand-in runs at the lowest priority, so it
  // takes only CPU the measured processes leave (its writes lag and coalesce instead).
  setPriority(tableProcess.process.pid!, 19);
  const tableReady = await tableProcess.next();
  const meter = new CapacityMeter();
  const client = createDocumentClient({ endpoint: tableReady.endpoint as string, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, meter });
  cleanups.push(() => client.destroy());
  const table = { client, tableName: tableReady.tableName as string };
  // The objects' writes alone (their own partition, docs/table.md): sessions, health, progress and
  // reports are written in the same windows, and their number grows with a window a slow run makes longer.
  const objectWriteUnits = () => meter.writeUnitsByPartition.get(PK_PREFIX.resource.replace(/#$/, '')) ?? 0;
  for (let round = 1; round <= ROUNDS; round++) {
    await createAccount(table, `${ACCOUNT}-${round}`, 1);
    await updateAccount(table, `${ACCOUNT}-${round}`, 1, { cachingAgentId: 'bench-agent', cachingEpoch: 1 }, 1);
  }
  let cache: CacheHandlers | undefined;
  const driver = await startDriver({
    config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: [TOKEN] } }),
    table,
    clock: systemClock,
    log: silentLogger(),
    modules: [resourcesModuleWith({ gateTtlMs: 1000 }, (built) => (cache = built))],
  });
  cleanups.push(() => driver.close(100));
  const wire = countBytesTo(() => driver.port);
  cleanups.push(() => wire.stop());
  const kubePid = kubeProcess.process.pid!;

  /**
   * One informer process: its sync, then (settled: full GC, pause) its memory and a burst of updates.
   * CPU is read from the first update until the last event was counted.
   */
  const baselineRound = async () => {
    const informer = new Child(['--expose-gc', join(HERE, 'cache-informer.ts'), kubeconfig]);
    cleanups.push(() => informer.kill());
    const kubeCpu0 = await cpuMsOf(kubePid);
    const sync = await informer.next('synced');
    const kubeCpu = (await cpuMsOf(kubePid)) - kubeCpu0;
    const cpu = await cpuMsOf(informer.process.pid!);
    informer.send('settle');
    const settled = await informer.next('settled');
    informer.send(`count ${EVENTS}`);
    const cpu0 = { kube: await cpuMsOf(kubePid), informers: await cpuMsOf(informer.process.pid!) };
    const produceMs = await churn(kube, EVENTS);
    const counted = await informer.next('counted');
    const burstCpu = { api_server: (await cpuMsOf(kubePid)) - cpu0.kube, informers: (await cpuMsOf(informer.process.pid!)) - cpu0.informers };
    informer.send('stop');
    const stopped = await informer.next('stopped');
    await informer.exited();
    return { syncMs: sync.ms as number, objects: sync.objects as number, cpu, kubeCpu, settled, counted, produceMs, burstCpu, peakRss: stopped.peakRss as number };
  };

  /**
   * One agent process caching account `bench-<round>` (a fresh one each round, so each lists): its
   * sync, then (settled) its memory and the same burst as the informers'.
   */
  const agentRound = async (round: number, last: boolean) => {
    const account = `${ACCOUNT}-${round}`;
    const profile = last ? profileArgs : [];
    // The agent runs with the Node flags it is deployed with (deploy/docker/agent.Dockerfile).
    const agent = new Child(['--expose-gc', ...AGENT_NODE_FLAGS, ...profile, join(HERE, 'cache-agent.ts'), JSON.stringify({ kubeconfig, driver: `127.0.0.1:${driver.port}`, token: TOKEN, account })]);
    cleanups.push(() => agent.kill());
    await agent.next('started');
    const t0 = performance.now();
    const bytes0 = wire.bytes();
    const wcu0 = objectWriteUnits();
    const allWcu0 = meter.writeUnits;
    const kubeCpu1 = await cpuMsOf(kubePid);
    const driverCpu1 = process.cpuUsage();
    const agentCpu1 = await cpuMsOf(agent.process.pid!);
    const sync = await agent.next('synced');
    const kubeCpu = (await cpuMsOf(kubePid)) - kubeCpu1;
    const driverCpu = process.cpuUsage(driverCpu1);
    const cpu = (await cpuMsOf(agent.process.pid!)) - agentCpu1;
    const writer = cache!.writer(account)!;
    await writer.idle();
    const result = {
      syncMs: sync.ms as number,
      syncRelists: sync.relists as number,
      cpu,
      driverCpu: (driverCpu.user + driverCpu.system) / 1000,
      kubeCpu,
      tableSyncMs: performance.now() - t0,
      bytes: wire.bytes() - bytes0,
      wcu: objectWriteUnits() - wcu0,
      allWcu: meter.writeUnits - allWcu0,
      written: writer.stats.written,
      peakRss: sync.peakRss as number,
    };
    agent.send('settle');
    const settled = await agent.next('settled');
    const before = { ...writer.stats, wcu: objectWriteUnits(), bytes: wire.bytes() };
    agent.send('gc');
    const gc0 = await agent.next('gc');
    const cpu0 = { kube: await cpuMsOf(kubePid), agent: await cpuMsOf(agent.process.pid!), driver: process.cpuUsage(), table: await cpuMsOf(tableProcess.process.pid!), agentThreads: await cpuMsByThread(agent.process.pid!) };
    const t1 = performance.now();
    const produced = churn(kube, EVENTS);
    while (writer.stats.changes - before.changes < EVENTS) await new Promise((r) => setTimeout(r, 5));
    const deliveredMs = performance.now() - t1;
    const burstDriverCpu = process.cpuUsage(cpu0.driver);
    const burstCpu = {
      api_server: (await cpuMsOf(kubePid)) - cpu0.kube,
      agent: (await cpuMsOf(agent.process.pid!)) - cpu0.agent,
      driver: Math.round((burstDriverCpu.user + burstDriverCpu.system) / 1000),
      table: (await cpuMsOf(tableProcess.process.pid!)) - cpu0.table,
    };
    const agentThreads = Object.fromEntries([...(await cpuMsByThread(agent.process.pid!))].map(([name, ms]) => [name, ms - (cpu0.agentThreads.get(name) ?? 0)]));
    agent.send('gc');
    const gc1 = await agent.next('gc');
    const perThousand = (key: string) => Math.round((((gc1[key] as number) - (gc0[key] as number)) * 1000 * 100) / EVENTS) / 100;
    const agentCollections = { scavenges: perThousand('scavenges'), mark_compacts: perThousand('markCompacts') };
    const produceMs = await produced;
    await writer.idle();
    const churned = {
      agentCollections,
      deliveredMs,
      produceMs,
      burstCpu,
      agentThreads,
      drainedMs: performance.now() - t1,
      bytes: wire.bytes() - before.bytes,
      written: writer.stats.written - before.written,
      wcu: objectWriteUnits() - before.wcu,
      coalesced: writer.stats.coalesced - before.coalesced,
      lagTotalMs: writer.stats.lagTotalMs - before.lagTotalMs,
      lagMaxMs: writer.stats.lagMaxMs,
    };
    agent.send('stop');
    const stopped = await agent.next('stopped');
    await agent.exited();
    return { ...result, settled, churn: churned, stopped };
  };

  // The load generator parses each pod it updates the first time, then goes on from what it left
  // (test/kube/seed.ts): one round over every pod before anything is measured, so that no burst
  // counts the generator's parsing of 20,000 pods as API server work.
  const pods = (ready.seeded as Record<string, number> | undefined)?.Pod ?? 0;
  await kube.request({ method: 'POST', path: '/_test/churn', body: { count: pods, batch: 1000 }, retry: false });

  // What the API server can send at all: a burst of pod updates to a watch that only counts lines,
  // measured before the rounds while nothing else runs. It bounds the events per second end to end.
  // A reader that falls 64 MB behind is dropped by the server (as a real one drops slow watchers);
  // the figure then says so instead of waiting for lines that never come.
  const ceiling = await (async () => {
    const from = (await kube.request({ path: '/api/v1/pods', query: { limit: 1 } })).json<{ metadata: { resourceVersion: string } }>();
    const watch = await kube.stream({ path: '/api/v1/pods', query: { watch: 1, resourceVersion: from.metadata.resourceVersion, timeoutSeconds: 3600 } });
    let lines = 0;
    let receivedMs = NaN;
    const t = performance.now();
    const reading = (async () => {
      for await (const batch of watch.batches) {
        for (let i = batch.indexOf(10); i >= 0; i = batch.indexOf(10, i + 1)) lines++;
        if (lines >= EVENTS) {
          receivedMs = performance.now() - t;
          return;
        }
      }
    })();
    const produceMs = await churn(kube, EVENTS);
    await reading;
    watch.close();
    const complete = lines >= EVENTS;
    return { produced: (EVENTS / produceMs) * 1000, received: complete ? (EVENTS / receivedMs) * 1000 : NaN, complete, lines };
  })();

  // Rounds alternate, so a change of the machine's load falls on both sides.
  const baseRuns: Awaited<ReturnType<typeof baselineRound>>[] = [];
  const agentRuns: Awaited<ReturnType<typeof agentRound>>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    baseRuns.push(await baselineRound());
    agentRuns.push(await agentRound(round, round === ROUNDS));
  }
  const base = baseRuns[ROUNDS - 1]!;
  const last = agentRuns[ROUNDS - 1]!;
  const baseSettled = base.settled;
  const agentSettled = last.settled;
  // What the table took of the agent's bursts, all rounds together.
  const bursts = agentRuns.map((r) => r.churn);
  const sum = (f: (b: (typeof bursts)[number]) => number) => bursts.reduce((n, b) => n + f(b), 0);
  const c = {
    bytes: sum((b) => b.bytes),
    written: sum((b) => b.written),
    wcu: sum((b) => b.wcu),
    coalesced: sum((b) => b.coalesced),
    drainedMs: sum((b) => b.drainedMs),
    lagTotalMs: sum((b) => b.lagTotalMs),
    lagMaxMs: Math.max(...bursts.map((b) => b.lagMaxMs)),
  };
  const changes = EVENTS * ROUNDS;

  // ---- figures ----
  const median = medianOf;
  const mib = (b: unknown) => Math.round(((b as number) / 1048576) * 10) / 10;
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const agentSyncMs = median(agentRuns.map((r) => r.syncMs));
  const baseSyncMs = median(baseRuns.map((r) => r.syncMs));
  emit('initial_sync', agentSyncMs, 'ms', {
    baseline: Math.round(baseSyncMs),
    speedup: ratio(baseSyncMs, agentSyncMs),
    target: 'speedup >= 2',
    met: baseSyncMs / agentSyncMs >= 2,
    rounds: agentRuns.map((r, i) => ({ agent: Math.round(r.syncMs), baseline: Math.round(baseRuns[i]!.syncMs) })),
    baseline_objects: base.objects,
    into_table_ms: Math.round(median(agentRuns.map((r) => r.tableSyncMs))),
    table_writes: last.written,
    table_wcu: last.wcu,
    table_wcu_every_write: last.allWcu,
    agent_cpu_ms: Math.round(median(agentRuns.map((r) => r.cpu))),
    baseline_cpu_ms_with_start: Math.round(median(baseRuns.map((r) => r.cpu))),
    driver_cpu_ms: Math.round(median(agentRuns.map((r) => r.driverCpu))),
    api_server_cpu_ms: Math.round(median(agentRuns.map((r) => r.kubeCpu))),
    baseline_api_server_cpu_ms: Math.round(median(baseRuns.map((r) => r.kubeCpu))),
  });
  const agentPeak = Math.max(last.peakRss, last.stopped!.peakRss as number);
  emit('peak_rss', mib(agentPeak), 'MiB', { baseline: mib(base.peakRss), ratio: ratio(agentPeak, base.peakRss) });
  emit('settled_rss', mib(agentSettled.rss), 'MiB', {
    baseline: mib(baseSettled.rss),
    ratio: ratio(agentSettled.rss as number, baseSettled.rss as number),
    target: 'ratio <= 0.5',
    met: (agentSettled.rss as number) <= (baseSettled.rss as number) / 2,
    heap_used: mib(agentSettled.heapUsed),
    baseline_heap_used: mib(baseSettled.heapUsed),
  });
  emit('bytes_to_driver_initial_sync', mib(last.bytes), 'MiB', { per_object_bytes: Math.round(last.bytes / last.written) });
  emit('bytes_to_driver_per_event', c.bytes / changes, 'bytes');
  // Judged against the informers receiving the same burst in the same round, a few seconds apart (a
  // ratio the machine's speed cancels out of), as the median of the rounds' ratios; the absolute
  // rates and the API server's ceiling are information.
  const pairs = agentRuns.map((r, i) => ({ agent: (EVENTS / r.churn.deliveredMs) * 1000, informers: (EVENTS / (baseRuns[i]!.counted.ms as number)) * 1000 }));
  const watch = burstFigure(pairs);
  const perEvent = (ms: number) => Math.round((ms * 1000) / EVENTS);
  const medianCpu = <K extends string>(cpus: Record<K, number>[]) =>
    Object.fromEntries(Object.keys(cpus[0]!).map((k) => [k, Math.round(medianOf(cpus.map((x) => x[k as K])))])) as Record<K, number>;
  const agentBurstCpu = medianCpu(agentRuns.map((r) => r.churn.burstCpu));
  const baseBurstCpu = medianCpu(baseRuns.map((r) => r.burstCpu));
  emit('watch_events_into_driver', watch.median, 'x the informers', {
    events: EVENTS,
    rounds: ROUNDS,
    ratios: watch.ratios.map((x) => ratio(x, 1)),
    spread: watch.spread.map((x) => ratio(x, 1)),
    // Every burst's rate, in the order they were made: the informers', then the agent's, each round.
    bursts: pairs.map((p) => ({ informers: Math.round(p.informers), agent: Math.round(p.agent) })),
    events_per_s: Math.round(watch.agentPerS),
    baseline: Math.round(watch.informersPerS),
    baseline_is: 'client-node informers receiving the same burst (median events/s)',
    ratio_to_informers: ratio(watch.median, 1),
    api_server_ceiling_per_s: Math.round(ceiling.received),
    ratio_to_ceiling: ratio(watch.agentPerS, ceiling.received),
    informers_ratio_to_ceiling: ratio(watch.informersPerS, ceiling.received),
    api_server_produced_per_s: Math.round(medianOf(agentRuns.map((r) => (EVENTS / r.churn.produceMs) * 1000))),
    baseline_api_server_produced_per_s: Math.round(medianOf(baseRuns.map((r) => (EVENTS / r.produceMs) * 1000))),
    // More lists than kinds during a burst would mean a watch was lost beyond resuming, and the
    // relist's objects counted as events.
    relists_during_burst: agentRuns.reduce((n, r) => n + (r.stopped.relists as number) - r.syncRelists, 0),
    // CPU each process used from the first update until the last event reached the driver (the
    // informers: was counted), medians of the bursts.
    cpu_ms_until_delivered: agentBurstCpu,
    // Collections of the agent's main-thread heap per 1,000 events (medians of the bursts): they count
    // what the agent allocates and keeps per event, whatever the machine's load.
    agent_collections_per_1000_events: {
      scavenges: medianOf(agentRuns.map((r) => r.churn.agentCollections.scavenges)),
      mark_compacts: medianOf(agentRuns.map((r) => r.churn.agentCollections.mark_compacts)),
    },
    agent_cpu_us_per_event_by_thread: Object.fromEntries(
      Object.keys(last.churn.agentThreads).map((name) => [name, perEvent(medianOf(agentRuns.map((r) => r.churn.agentThreads[name] ?? 0)))]),
    ),
    cpu_us_per_event: Object.fromEntries(Object.entries(agentBurstCpu).map(([k, v]) => [k, perEvent(v as number)])),
    baseline_cpu_us_per_event: Object.fromEntries(Object.entries(baseBurstCpu).map(([k, v]) => [k, perEvent(v as number)])),
    target: '>= 1.0 x the informers',
    met: watch.median >= 1,
    absolute_events_per_s_reference: 10_000,
  });
  emit('api_server_ceiling', ceiling.received, 'events/s', {
    events: EVENTS,
    produced_per_s: Math.round(ceiling.produced),
    complete: ceiling.complete,
    ...(ceiling.complete ? {} : { dropped_after_lines: ceiling.lines }),
    what: 'a burst of pod updates to a watch that only counts lines, before the rounds: the most the API server sends on this machine',
  });
  emit('table_writes', (c.written / c.drainedMs) * 1000, 'writes/s', {
    written: c.written,
    coalesced: c.coalesced,
    drained_ms: Math.round(c.drainedMs),
    lag_avg_ms: Math.round(c.lagTotalMs / Math.max(1, c.written)),
    lag_max_ms: c.lagMaxMs,
  });
  // A changed object is one change the API server made (one watch event); coalescing writes several
  // changes of one object once. The bookkeeping writes (progress, health) are counted in.
  emit('wcu_per_changed_object', c.wcu / changes, 'WCU', { wcu: c.wcu, changes, written: c.written, wcu_per_write: Math.round((c.wcu / c.written) * 1000) / 1000, target: '<= 1', met: c.wcu / changes <= 1 });
  emit('agent_cpu', last.stopped!.cpuMs as number, 'ms');
} finally {
  for (const c of cleanups.reverse()) await c();
  await rm(dir, { recursive: true, force: true });
}
// Keep-alive sockets of the clients may linger a while; the figures are out.
process.exit(0);
