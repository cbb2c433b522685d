/**
 * The replica's result-ask endpoint (docs/protocol.md#6b-wakes): HTTP over TCP on the wake port's
 * number, where the API, waiting for an operation, asks "has it finished here?". Checked like a wake
 * and in the same order (rate, shape, signature, age, nonce; `driver/wake/guard.ts`) before the id is
 * looked at; a refused ask gets 403 (429 when over the rate, 503 when `maxResultWaiters` are held) at
 * once and nothing else. An accepted one is held until the operation finishes through this replica
 * (200) or its wait, at most `resultHoldMs`, passes (204). A 200 carries the finished operation when
 * its body is kept (shared/wake/result-answer.ts), signed together with the ask it answers; without
 * one the API reads the operation from the table.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import { RESULT_ASK_HEADER, RESULT_ASK_PATH, RESULT_FINISHED, RESULT_NOT_YET, verifyResultAsk } from '../../shared/wake/result-ask.ts';
import { RESULT_ANSWER_HEADER, signResultAnswer } from '../../shared/wake/result-answer.ts';
import { RESERVE_ASK_PATH } from '../../shared/wake/reserve-ask.ts';
import type { WakeConfig } from './config.ts';
import { DatagramRate, NonceWindow } from './guard.ts';
import type { ResultNews } from './result-news.ts';

export type ResultAskOutcome = 'finished' | 'not_yet' | 'malformed' | 'forged' | 'stale' | 'replayed' | 'rate_limited' | 'busy';

export interface ResultEndpointOptions {
  config: Pick<WakeConfig, 'host' | 'maxAgeMs' | 'maxResultAsksPerSecond' | 'resultHoldMs' | 'maxResultWaiters'>;
  /** The TCP port: the wake endpoint's. */
  port: number;
  secret: string;
  clock: Clock;
  log: Logger;
  news: ResultNews;
  /** Hears every ask's outcome (the metrics). */
  counted?(outcome: ResultAskOutcome): void;
  /** Answers reservation asks at `RESERVE_ASK_PATH` (reserve-endpoint.ts); without it they are refused as any other path. */
  reserve?(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface ResultEndpoint {
  readonly port: number;
  close(): Promise<void>;
}

/** How long a request's headers may take to arrive: the API sends them in one write. */
export const HEADERS_TIMEOUT_MS = 5_000;
/**
 * Open connections at most, per ask the endpoint may hold (`wake.maxResultWaiters`): an API instance
 * holds a result ask and a reservation ask to a replica at once at most, each on a kept connection.
 */
export const CONNECTIONS_PER_WAITER = 2;

const REFUSED: Record<Exclude<ResultAskOutcome, 'finished' | 'not_yet'>, number> = {
  malformed: 403,
  forged: 403,
  stale: 403,
  replayed: 403,
  rate_limited: 429,
  busy: 503,
};

export async function startResultEndpoint(options: ResultEndpointOptions): Promise<ResultEndpoint> {
  const { config, secret, clock, log, news } = options;
  const rate = new DatagramRate(config.maxResultAsksPerSecond, clock.now());
  const nonces = new NonceWindow(config.maxAgeMs, config.maxResultAsksPerSecond * Math.ceil((config.maxAgeMs * 2) / 1000));
  let refusalsLogged = 0;
  const answer = (res: ServerResponse, outcome: ResultAskOutcome): void => {
    options.counted?.(outcome);
    if (outcome !== 'finished' && outcome !== 'not_yet' && outcome !== 'rate_limited' && outcome !== 'busy' && refusalsLogged++ < 5) log.warn({ outcome }, 'result ask refused');
    const status = outcome === 'finished' ? RESULT_FINISHED : outcome === 'not_yet' ? RESULT_NOT_YET : REFUSED[outcome];
    if (!res.headersSent) res.writeHead(status, { 'content-length': '0', 'cache-control': 'no-store' }).end();
  };
  /** "Finished", with the operation when its body is kept, signed for the ask `header`. */
  const finished = (res: ServerResponse, id: string, header: string): void => {
    const body = news.answerOf(id);
    if (body === undefined || res.headersSent) return answer(res, 'finished');
    options.counted?.('finished');
    const signature = signResultAnswer(secret, header, body);
    pathTrace?.('replica.ask_answered', id);
    res
      .writeHead(RESULT_FINISHED, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'cache-control': 'no-store',
        [RESULT_ANSWER_HEADER]: signature,
      })
      .end(body);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' || req.url !== RESULT_ASK_PATH) return answer(res, 'malformed');
    const now = clock.now();
    if (!rate.take(now)) return answer(res, 'rate_limited');
    const raw = req.headers[RESULT_ASK_HEADER];
    const header = typeof raw === 'string' ? raw : undefined;
    const ask = verifyResultAsk(secret, header);
    if (ask === 'malformed' || ask === 'forged') return answer(res, ask);
    const refusal = nonces.admit(ask.nonce, ask.at, now);
    if (refusal !== undefined) return answer(res, refusal);
    if (news.waiting >= config.maxResultWaiters && !news.finishedHere(ask.operationId)) return answer(res, 'busy');
    pathTrace?.('replica.ask_received', ask.operationId);
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    if (await news.until(ask.operationId, Math.min(ask.waitMs, config.resultHoldMs), gone.signal)) finished(res, ask.operationId, header ?? '');
    else answer(res, 'not_yet');
  };
  // Node checks the header and request timeouts only every `connectionsCheckingInterval` (30 s by
  // default): a connection that never finishes its headers would be held six times their bound.
  const timeouts = { requestTimeout: config.resultHoldMs + 5_000, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000 };
  const server: Server = createServer({ keepAlive: true, ...timeouts, maxHeaderSize: 4096 }, (req, res) => {
    const reserving = options.reserve !== undefined && req.url === RESERVE_ASK_PATH;
    // A reservation ask's body is read by its handler; nothing else has one worth reading.
    if (!reserving) req.resume();
    (reserving ? (options.reserve as NonNullable<typeof options.reserve>)(req, res) : handle(req, res)).catch((err: unknown) => {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, reserving ? 'reservation ask failed' : 'result ask failed');
      if (!res.headersSent) res.writeHead(500, { 'content-length': '0' }).end();
    });
  });
  // An idle connection from the API is kept for its next ask, not forever.
  server.keepAliveTimeout = 30_000;
  // Connections are bounded too, not only the asks held on them: idle or slow ones past the bound are
  // closed as they come, and the API's asks that meet a full endpoint fall back to the table.
  server.maxConnections = config.maxResultWaiters * CONNECTIONS_PER_WAITER;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.warn({ err: err.message }, 'result endpoint error'));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  log.info({ host: config.host, port }, 'result endpoint listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
