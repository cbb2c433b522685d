/**
 * HTTP(S) to one cluster API server. Credentials, TLS and proxy routing come from client-node's
 * `KubeConfig.applyToHTTPSOptions` on every request, so exec plugins and rotating token files are
 * refreshed as they expire; sockets are kept alive per cluster, because the cache lists and watches
 * many kinds and a new TLS handshake per request would dominate its cost.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { credentialsUnavailable, kubeHttpError, kubeTransportError } from './errors.ts';
import type { LoadedCluster } from './kubeconfig.ts';
import { splitLines } from './lines.ts';
import { leasePool, poolKey } from './shared-agents.ts';
import { withRetries } from './retry.ts';
import type { ClusterClient, KubeRequest, KubeResponse, KubeStream, RetrySettings, ServerVersion } from './types.ts';
import { VERSION } from '../../shared/version.ts';

/** How the agent names itself to API servers. */
export const USER_AGENT = `vendor-agent/${VERSION}`;

export interface ClusterClientDeps {
  retries: RetrySettings;
  clock: Clock;
  logger: Logger;
  /** Counts each retried request (`vendor_agent_retries_total{target="kubernetes"}`). */
  onRetry?(account: string): void;
  /** Concurrent sockets of buffered requests to this API server; 32 by default. Watches are not counted. */
  maxSockets?: number;
}

type TlsMaterial = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/**
 * One TLS context for every connection of an agent. Without it each connection makes its own, loading
 * the CA and the client key again: about 37 KiB and a parse per watch, and an agent with 100 accounts
 * of 10 kinds holds 1,000 watches.
 */
function secureContextOf(tls: TlsMaterial): SecureContext {
  return createSecureContext({
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
  });
}

function sameTls(a: TlsMaterial, b: TlsMaterial): boolean {
  const eq = (x: unknown, y: unknown) => (Buffer.isBuffer(x) && Buffer.isBuffer(y) ? x.equals(y) : x === y);
  return eq(a.ca, b.ca) && eq(a.cert, b.cert) && eq(a.key, b.key) && a.rejectUnauthorized === b.rejectUnauthorized && a.servername === b.servername;
}

function encodeBody(body: KubeRequest['body']): { bytes: Buffer | undefined; json: boolean } {
  if (body === undefined) return { bytes: undefined, json: false };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), json: false };
  if (body instanceof Uint8Array) return { bytes: Buffer.from(body), json: false };
  return { bytes: Buffer.from(JSON.stringify(body), 'utf8'), json: true };
}

/**
 * Calls `written` once the request is handed to its connection: on a kept-alive one, right after the
 * buffered request is flushed to it (in the tick that gives the request its socket); on a new one,
 * once the request is out ('finish', after the handshake). 'finish' alone would wait for the write's
 * callback, a turn of the event loop later.
 */
function traceWrite(http: ClientRequest, written: () => void): void {
  http.once('socket', (socket) => {
    if (socket.connecting) http.once('finish', written);
    else queueMicrotask(written);
  });
}

async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A batch grows no larger than this, however fast the body arrives. */
const MAX_BATCH_BYTES = 256 * 1024;

/** True once `next` has settled, false if it has not by the end of this turn of the event loop. */
function settledThisTurn(next: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const turn = setImmediate(() => resolve(false));
    next.then(
      () => {
        clearImmediate(turn);
        resolve(true);
      },
      () => {
        clearImmediate(turn);
        resolve(true);
      },
    );
  });
}

/**
 * Cuts a streamed body at line ends: each batch holds the complete lines of what has arrived (each
 * ending with a newline), in a buffer of its own that may be handed to another thread. What arrives
 * in the same turn of the event loop joins one batch (up to `MAX_BATCH_BYTES`): a flood of events
 * (the initial events of a WatchList come as 16 KB TLS records) makes few large batches, worth
 * decoding in another thread, while a trickle is handed on at once. After `closed()` the end of the
 * body is the end of the stream, not an error.
 */
async function* batchesOf(res: IncomingMessage, closed: () => boolean, broken: (cause: unknown) => Error): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let next = chunks.next();
  let finished = false;
  try {
    for (;;) {
      let got: IteratorResult<Buffer>;
      try {
        got = await next;
      } catch (e) {
        if (closed()) return;
        // The connection broke mid-body (the server went away): a request that lost its answer.
        throw broken(e);
      }
      if (got.done) break;
      pending.push(got.value);
      pendingBytes += got.value.length;
      next = chunks.next();
      if (pendingBytes < MAX_BATCH_BYTES && (await settledThisTurn(next))) continue;
      // The last newline is in the last chunk that has one; what follows it waits for the next batch.
      let last = pending.length - 1;
      let cut = -1;
      for (; last >= 0; last--) {
        cut = (pending[last] as Buffer).lastIndexOf(10);
        if (cut >= 0) break;
      }
      if (last < 0) continue;
      const end = pendingBytes - pending.slice(last).reduce((n, b) => n + b.length, 0) + cut + 1;
      // Copied straight out of the socket's chunks, so the batch owns its memory.
      const batch = Buffer.allocUnsafeSlow(end);
      let at = 0;
      for (let i = 0; i < last; i++) at += (pending[i] as Buffer).copy(batch, at);
      (pending[last] as Buffer).copy(batch, at, 0, cut + 1);
      const rest = pending.slice(last + 1);
      const tail = (pending[last] as Buffer).subarray(cut + 1);
      pending = tail.length === 0 ? rest : [tail, ...rest];
      pendingBytes -= end;
      yield batch;
    }
    if (pendingBytes > 0) {
      // The body's last line may lack its newline.
      const joined = Buffer.concat(pending, pendingBytes);
      const whole = joined[joined.length - 1] === 10;
      const batch = Buffer.allocUnsafeSlow(joined.length + (whole ? 0 : 1));
      joined.copy(batch);
      if (!whole) batch[joined.length] = 10;
      yield batch;
    }
    finished = true;
  } finally {
    // A reader that stops early (a watch closed mid-flood) leaves the read of the next chunk under way;
    // the response is destroyed with it, and that read's failure must not go unheard and end the process.
    if (!finished) {
      next.catch(() => undefined);
      void chunks.return?.().catch(() => undefined);
    }
  }
}

async function* flatten(batches: AsyncIterable<Buffer>): AsyncIterable<string> {
  for await (const batch of batches) yield* splitLines(batch);
}

export function createClusterClient(account: string, loaded: LoadedCluster, deps: ClusterClientDeps): ClusterClient {
  const base = new URL(loaded.server);
  const plain = base.protocol === 'http:';
  const prefix = base.pathname.replace(/\/$/, '');
  const maxSockets = deps.maxSockets ?? 32;
  // Watches hold their connection for minutes, one per scope, so they get an agent of their own with
  // no socket limit; lists and writes share a bounded one and never queue behind watches.
  // Lists, writes and checks go over a pool shared with the other clients of the same server and TLS
  // material (shared-agents.ts): a new account's first request finds a connection already open.
  const ownAgents: Record<'buffered' | 'streaming', { agent: HttpAgent; tls: TlsMaterial; release(): void } | undefined> = { buffered: undefined, streaming: undefined };
  let closed = false;
  const credentials = loaded.credentials?.(deps.clock);

  const agentFor = (opts: RequestOptions, use: 'buffered' | 'streaming'): HttpAgent => {
    // A proxy agent made by client-node from the cluster's proxy-url (set by the rules of docs/agent-config.md#proxies) stays.
    if (loaded.proxy.proxy !== undefined && opts.agent instanceof HttpAgent) return opts.agent;
    const tls: TlsMaterial = { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername };
    const own = ownAgents[use];
    if (own !== undefined && sameTls(own.tls, tls)) return own.agent;
    own?.release();
    const common = { keepAlive: true, maxSockets: use === 'buffered' ? maxSockets : Infinity, scheduling: 'lifo' as const };
    const make = () => (plain ? new HttpAgent(common) : new HttpsAgent({ ...common, ...tls, secureContext: secureContextOf(tls) }));
    if (use === 'buffered') {
      const lease = leasePool(poolKey([base.origin, maxSockets, tls.ca, tls.cert, tls.key, tls.rejectUnauthorized, tls.servername]), maxSockets, make);
      ownAgents[use] = { agent: lease.agent, tls, release: lease.release };
      return lease.agent;
    }
    const agent = make();
    ownAgents[use] = { agent, tls, release: () => agent.destroy() };
    return agent;
  };

  /** Sends one request and resolves with the response head; the caller reads or streams the body. */
  const send = async (req: KubeRequest, method: string, use: 'buffered' | 'streaming'): Promise<{ res: IncomingMessage; http: ClientRequest; headReceived(): void }> => {
    if (closed) throw new VendorError('unavailable', `the client of account ${account} is closed`);
    const url = new URL(prefix + req.path, base);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const { bytes, json } = encodeBody(req.body);
    const opts: RequestOptions = {
      method,
      headers: {
        accept: 'application/json',
        // API servers record it in audit logs and metrics: operators can tell the agent's requests apart.
        'user-agent': USER_AGENT,
        ...(json ? { 'content-type': 'application/json' } : {}),
        ...(bytes === undefined ? {} : { 'content-length': String(bytes.length) }),
        ...req.headers,
      },
    };
    try {
      await loaded.kubeConfig.applyToHTTPSOptions(opts);
      await credentials?.apply(opts);
    } catch (e) {
      throw credentialsUnavailable(account, e);
    }
    opts.agent = agentFor(opts, use);
    // An abort that came before (while credentials were obtained, say) sends nothing: its listener below would never fire.
    if (req.signal?.aborted) throw kubeTransportError(account, method, req.path, new Error('request cancelled'));
    const started = (plain ? httpRequest : httpsRequest)(url, opts);
    if (req.trace !== undefined) traceWrite(started, req.trace.written);
    return new Promise((resolve, reject) => {
      const timeoutMs = req.timeoutMs ?? 0;
      const timer = timeoutMs > 0 ? setTimeout(() => started.destroy(new Error(`timeout: no answer within ${timeoutMs} ms`)), timeoutMs) : undefined;
      const onAbort = () => started.destroy(new Error('request cancelled'));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      started.once('response', (res) => {
        // For a buffered read the limit covers the body too; a stream stops it once the head is in.
        resolve({ res, http: started, headReceived: () => timer !== undefined && clearTimeout(timer) });
        res.once('close', done);
      });
      started.once('error', (e) => {
        done();
        reject(kubeTransportError(account, method, req.path, e));
      });
      started.end(bytes);
    });
  };

  /**
   * Sends once; a 401 with credentials the agent obtains itself (an exec plugin, gcp) drops them and
   * sends once more with fresh ones, as client-go does.
   */
  const sendFresh = async (req: KubeRequest, method: string, use: 'buffered' | 'streaming'): Promise<Awaited<ReturnType<typeof send>>> => {
    const sent = await send(req, method, use);
    if (sent.res.statusCode !== 401 || credentials === undefined) return sent;
    sent.res.resume();
    credentials.invalidate();
    return send(req, method, use);
  };

  const once = async (req: KubeRequest): Promise<KubeResponse> => {
    const method = req.method ?? 'GET';
    const { res, http } = await sendFresh(req, method, 'buffered');
    let body: Buffer;
    try {
      body = await readAll(res);
    } catch (e) {
      http.destroy();
      throw kubeTransportError(account, method, req.path, e);
    }
    req.trace?.answered();
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw kubeHttpError(account, method, req.path, status, body);
    return { status, headers: res.headers, body, json: <T>() => JSON.parse(body.toString('utf8')) as T };
  };

  const client: ClusterClient = {
    account,
    server: loaded.server,
    ...(loaded.identity === undefined ? {} : { identity: loaded.identity }),
    request: (req) =>
      req.retry === false
        ? once(req)
        : withRetries(
            deps.retries,
            {
              clock: deps.clock,
              signal: req.signal,
              onRetry: (error, failedTry) => {
                deps.onRetry?.(account);
                deps.logger.warn({ account, try: failedTry, err: (error as Error).message }, 'cluster request failed; retrying');
              },
            },
            () => once(req),
          ),
    stream: async (req): Promise<KubeStream> => {
      const method = req.method ?? 'GET';
      const { res, http, headReceived } = await sendFresh(req, method, 'streaming');
      headReceived();
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        const body = await readAll(res).catch(() => Buffer.alloc(0));
        throw kubeHttpError(account, method, req.path, status, body);
      }
      let closedByCaller = false;
      const batches = batchesOf(res, () => closedByCaller, (cause) => kubeTransportError(account, method, req.path, cause));
      return {
        status,
        headers: res.headers,
        batches,
        lines: flatten(batches),
        close: () => {
          closedByCaller = true;
          http.destroy();
        },
      };
    },
    version: async (signal) => (await client.request({ path: '/version', ...(signal === undefined ? {} : { signal }) })).json<ServerVersion>(),
    close: () => {
      closed = true;
      ownAgents.buffered?.release();
      ownAgents.streaming?.release();
    },
  };
  return client;
}
