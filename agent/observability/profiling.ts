import { Session } from 'node:inspector/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encode, heap, time } from '@datadog/pprof';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { onlyGet, pathOf, sendText, startHttpServer, type RunningHttpServer } from './http-server.ts';
import { toDevToolsHeapProfile } from './v8-heap-profile.ts';

export const MAX_PROFILE_SECONDS = 600;

/** Average bytes allocated between two heap samples: Go's default, so the figures read alike. */
const HEAP_SAMPLE_BYTES = 512 * 1024;
const HEAP_STACK_DEPTH = 64;
/** Time between two CPU samples. */
const CPU_SAMPLE_MICROS = 1000;

const INDEX = `Profiles of this agent.
pprof's format (gzipped protobuf), for go tool pprof http://127.0.0.1:<port>/debug/pprof/profile?seconds=10
/debug/pprof/profile?seconds=30   CPU profile over N seconds (wall time per stack)
/debug/pprof/heap                 heap profile: the sampled allocations still live, at once
V8's formats, for Chrome DevTools (Performance / Memory tabs):
/debug/pprof/v8/profile?seconds=30   CPU profile over N seconds (.cpuprofile)
/debug/pprof/v8/heap                 the same heap samples (.heapprofile)
/debug/pprof/heapsnapshot            full heap snapshot (.heapsnapshot); pauses the agent while it is taken
One CPU profile or heap snapshot is taken at a time.
`;

class BadRequest extends Error {}

type Kind = 'cpu' | 'heap' | 'v8-cpu' | 'v8-heap' | 'snapshot';

const PATHS: Record<string, Kind> = {
  '/debug/pprof/profile': 'cpu',
  '/debug/pprof/heap': 'heap',
  '/debug/pprof/v8/profile': 'v8-cpu',
  '/debug/pprof/v8/heap': 'v8-heap',
  '/debug/pprof/heapsnapshot': 'snapshot',
};

/** Kinds that sample over time, and so take the profiler for that long. */
const TIMED = new Set<Kind>(['cpu', 'v8-cpu']);

function secondsParam(req: IncomingMessage, kind: Kind): number {
  const raw = new URL(req.url ?? '/', 'http://local').searchParams.get('seconds');
  if (!TIMED.has(kind)) {
    if (raw !== null) throw new BadRequest('the heap profile is taken at once: seconds applies to /debug/pprof/profile only');
    return 0;
  }
  if (raw === null) return 30;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PROFILE_SECONDS) {
    throw new BadRequest(`seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

const EXTENSIONS: Record<Kind, string> = {
  cpu: 'cpu.pb.gz',
  heap: 'heap.pb.gz',
  'v8-cpu': 'cpuprofile',
  'v8-heap': 'heapprofile',
  snapshot: 'heapsnapshot',
};

/** Answers with a file named after the time the profile was asked for; pprof's as Go serves them. */
function attachment(res: ServerResponse, askedAt: number, kind: Kind): void {
  const stamp = new Date(askedAt).toISOString().replace(/[:.]/g, '-');
  const pprof = kind === 'cpu' || kind === 'heap';
  res.writeHead(200, {
    'content-type': pprof ? 'application/octet-stream' : 'application/json',
    'content-disposition': `attachment; filename="vendor-agent-${stamp}.${EXTENSIONS[kind]}"`,
    'x-content-type-options': 'nosniff',
  });
}

/** Aborts when the client goes away before the answer is complete. */
function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
  });
  return controller.signal;
}

/** Waits `ms` (or until the client goes away), then always runs `stop` so no profiler is left running. */
async function sampleFor<T>(clock: Clock, ms: number, signal: AbortSignal, stop: () => T | Promise<T>): Promise<T> {
  const failed = await clock.sleep(ms, signal).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const result = await stop();
  if (failed !== undefined) throw failed.error;
  return result;
}

async function pprofCpuProfile(seconds: number, clock: Clock, signal: AbortSignal): Promise<Buffer> {
  time.start({ intervalMicros: CPU_SAMPLE_MICROS, durationMillis: seconds * 1000 });
  const profile = await sampleFor(clock, seconds * 1000, signal, () => time.stop());
  return encode(profile);
}

async function v8CpuProfile(seconds: number, clock: Clock, signal: AbortSignal): Promise<string> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const { profile } = await sampleFor(clock, seconds * 1000, signal, () => session.post('Profiler.stop'));
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
  }
}

async function heapSnapshot(res: ServerResponse): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    session.on('HeapProfiler.addHeapSnapshotChunk', (message) => {
      res.write(message.params.chunk);
    });
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    session.disconnect();
  }
}

/* V8 has one sampling heap profiler per process: it runs while any profiling endpoint of the process does. */
let heapSamplers = 0;

function startHeapSampling(): void {
  if (heapSamplers++ === 0) heap.start(HEAP_SAMPLE_BYTES, HEAP_STACK_DEPTH);
}

function stopHeapSampling(): void {
  if (--heapSamplers === 0) heap.stop();
}

/**
 * Where the profiling endpoint listens, whatever else is configured: a heap snapshot holds every
 * token and key of the agent, so only what runs in the pod (or `kubectl port-forward`) may ask.
 */
export const PROFILING_HOST = '127.0.0.1';

/**
 * The profiling endpoint (`pprof.*`), on loopback: CPU and heap profiles in pprof's format at Go's
 * paths, and in V8's formats beside them (docs/agent-config.md#profiling). While it runs, V8's
 * sampling heap profiler runs too, as Go's always does, so a heap profile answers at once.
 */
export async function startProfilingServer(options: { port: number; clock: Clock; logger: Logger }): Promise<RunningHttpServer> {
  const { clock, logger } = options;
  let busy = false;
  startHeapSampling();
  const server = await startHttpServer({
    host: PROFILING_HOST,
    port: options.port,
    handler: async (req, res) => {
      if (!onlyGet(req, res)) return;
      const path = pathOf(req);
      if (path === '/debug/pprof' || path === '/debug/pprof/') return sendText(res, 200, INDEX);
      const kind = PATHS[path];
      if (kind === undefined) return sendText(res, 404, `not found\n\n${INDEX}`);
      let seconds: number;
      try {
        seconds = secondsParam(req, kind);
      } catch (e) {
        if (e instanceof BadRequest) return sendText(res, 400, e.message);
        throw e;
      }
      const askedAt = clock.now();
      if (kind === 'heap' || kind === 'v8-heap') {
        const body = kind === 'heap' ? await encode(heap.profile()) : JSON.stringify(toDevToolsHeapProfile(heap.v8Profile()));
        attachment(res, askedAt, kind);
        res.end(body);
        return;
      }
      if (busy) return sendText(res, 409, 'another profile is being taken; try again when it is done');
      busy = true;
      const signal = clientGone(res);
      try {
        logger.info({ kind, seconds: TIMED.has(kind) ? seconds : undefined }, 'profile started');
        if (kind === 'snapshot') {
          attachment(res, askedAt, kind);
          await heapSnapshot(res);
          res.end();
        } else {
          const body = kind === 'cpu' ? await pprofCpuProfile(seconds, clock, signal) : await v8CpuProfile(seconds, clock, signal);
          attachment(res, askedAt, kind);
          res.end(body);
        }
        logger.info({ kind }, 'profile sent');
      } catch (e) {
        if (signal.aborted) logger.info({ kind }, 'profile abandoned: client went away');
        else throw e;
      } finally {
        busy = false;
      }
    },
  }).catch((e: unknown) => {
    stopHeapSampling();
    throw e;
  });
  return {
    url: server.url,
    port: server.port,
    close: async () => {
      await server.close();
      stopHeapSampling();
    },
  };
}
