import { Session } from 'node:inspector/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { onlyGet, pathOf, sendText, startHttpServer, type RunningHttpServer } from './http-server.ts';

export const MAX_PROFILE_SECONDS = 600;

const INDEX = `Profiles of this agent, loadable in Chrome DevTools (Performance / Memory tabs):
/debug/pprof/profile?seconds=30   CPU profile over N seconds (.cpuprofile)
/debug/pprof/heap?seconds=10      sampling heap profile over N seconds (.heapprofile)
/debug/pprof/heapsnapshot         full heap snapshot (.heapsnapshot); pauses the agent while it is taken
One profile runs at a time.
`;

class BadRequest extends Error {}

function secondsParam(req: IncomingMessage, fallback: number): number {
  const raw = new URL(req.url ?? '/', 'http://local').searchParams.get('seconds');
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PROFILE_SECONDS) {
    throw new BadRequest(`seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Answers with a file named after the time the profile was asked for. */
function attachment(res: ServerResponse, askedAt: number, extension: string): void {
  const stamp = new Date(askedAt).toISOString().replace(/[:.]/g, '-');
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-disposition': `attachment; filename="vendor-agent-${stamp}.${extension}"`,
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
async function sampleFor<T>(clock: Clock, ms: number, signal: AbortSignal, stop: () => Promise<T>): Promise<T> {
  const failed = await clock.sleep(ms, signal).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const result = await stop();
  if (failed !== undefined) throw failed.error;
  return result;
}

async function cpuProfile(session: Session, seconds: number, clock: Clock, signal: AbortSignal): Promise<unknown> {
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  const { profile } = await sampleFor(clock, seconds * 1000, signal, () => session.post('Profiler.stop'));
  return profile;
}

async function heapProfile(session: Session, seconds: number, clock: Clock, signal: AbortSignal): Promise<unknown> {
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32768 });
  const { profile } = await sampleFor(clock, seconds * 1000, signal, () => session.post('HeapProfiler.stopSampling'));
  return profile;
}

async function heapSnapshot(session: Session, res: ServerResponse): Promise<void> {
  session.on('HeapProfiler.addHeapSnapshotChunk', (message) => {
    res.write(message.params.chunk);
  });
  await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
}

/**
 * Where the profiling endpoint listens, whatever else is configured: a heap snapshot holds every
 * token and key of the agent, so only what runs in the pod (or `kubectl port-forward`) may ask.
 */
export const PROFILING_HOST = '127.0.0.1';

/** The profiling endpoint (`pprof.*`): CPU and heap profiles of this process through node:inspector, on loopback. */
export function startProfilingServer(options: { port: number; clock: Clock; logger: Logger }): Promise<RunningHttpServer> {
  const { clock, logger } = options;
  let busy = false;
  return startHttpServer({
    host: PROFILING_HOST,
    port: options.port,
    handler: async (req, res) => {
      if (!onlyGet(req, res)) return;
      const path = pathOf(req);
      if (path === '/debug/pprof' || path === '/debug/pprof/') return sendText(res, 200, INDEX);
      const kind = { '/debug/pprof/profile': 'cpu', '/debug/pprof/heap': 'heap', '/debug/pprof/heapsnapshot': 'snapshot' }[path];
      if (kind === undefined) return sendText(res, 404, `not found\n\n${INDEX}`);
      let seconds: number;
      try {
        seconds = secondsParam(req, kind === 'cpu' ? 30 : 10);
      } catch (e) {
        if (e instanceof BadRequest) return sendText(res, 400, e.message);
        throw e;
      }
      if (busy) return sendText(res, 409, 'another profile is being taken; try again when it is done');
      busy = true;
      const askedAt = clock.now();
      const session = new Session();
      session.connect();
      const signal = clientGone(res);
      try {
        logger.info({ kind, seconds: kind === 'snapshot' ? undefined : seconds }, 'profile started');
        if (kind === 'snapshot') {
          attachment(res, askedAt, 'heapsnapshot');
          await heapSnapshot(session, res);
          res.end();
        } else {
          const profile = kind === 'cpu' ? await cpuProfile(session, seconds, clock, signal) : await heapProfile(session, seconds, clock, signal);
          attachment(res, askedAt, kind === 'cpu' ? 'cpuprofile' : 'heapprofile');
          res.end(JSON.stringify(profile));
        }
        logger.info({ kind }, 'profile sent');
      } catch (e) {
        if (signal.aborted) logger.info({ kind }, 'profile abandoned: client went away');
        else throw e;
      } finally {
        session.disconnect();
        busy = false;
      }
    },
  });
}
