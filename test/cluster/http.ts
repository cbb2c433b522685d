import { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';
import type { ClusterTarget, Credentials } from './target.ts';

/** A JSON object as the API server sends it; scenarios read fields with `field()`. */
export type Json = { [key: string]: unknown };

export interface KubeResponse {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: Json | undefined;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Defaults to application/json when there is a body. */
  contentType?: string;
  accept?: string;
  /** Sent as Accept-Encoding; a gzip answer is decompressed (its headers still say how it came). */
  acceptEncoding?: string;
}

function connection(target: ClusterTarget, credentials: Credentials, method: string, path: string, headers: OutgoingHttpHeaders) {
  const url = new URL(path, target.url);
  if (credentials.kind === 'token') headers.authorization = `Bearer ${credentials.token}`;
  return httpsRequest(url, {
    method,
    headers,
    ca: target.tls.caCert,
    ...(credentials.kind === 'clientCert' ? { cert: credentials.cert, key: credentials.key } : {}),
    // Each request on its own socket: watches and restarts must not share a pooled connection.
    agent: false,
  });
}

function parseJson(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** One request, the whole answer read and parsed. */
export function kubeRequest(
  target: ClusterTarget,
  credentials: Credentials,
  path: string,
  options: RequestOptions = {},
): Promise<KubeResponse> {
  const method = options.method ?? 'GET';
  const payload =
    options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: OutgoingHttpHeaders = { accept: options.accept ?? 'application/json' };
  if (options.acceptEncoding !== undefined) headers['accept-encoding'] = options.acceptEncoding;
  if (payload !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    // Node sends DELETE bodies without framing unless told their length: the server would read the
    // body as the next request (kube-apiserver then ignores the DeleteOptions).
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = connection(target, credentials, method, path, headers);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.once('end', () => {
        const raw = Buffer.concat(chunks);
        const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parseJson(text) });
      });
    });
    req.end(payload);
  });
}

export interface WatchEvent {
  type: string;
  object: Json;
}

/** An open watch: events as they arrive, newline-delimited JSON as the server frames them. */
export interface WatchStream {
  /** HTTP status of the watch response. */
  readonly status: Promise<number>;
  /** The next event, or `'end'` once the server closed the stream. Rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<WatchEvent | 'end'>;
  /** Reads events until one matches; returns it with every event read on the way. */
  until(match: (e: WatchEvent) => boolean, timeoutMs?: number): Promise<{ event: WatchEvent; seen: WatchEvent[] }>;
  close(): void;
}

export function openWatch(target: ClusterTarget, credentials: Credentials, path: string): WatchStream {
  const queue: (WatchEvent | 'end')[] = [];
  const waiters: ((e: WatchEvent | 'end') => void)[] = [];
  let failure: Error | undefined;
  const push = (e: WatchEvent | 'end') => {
    const waiter = waiters.shift();
    if (waiter) waiter(e);
    else queue.push(e);
  };
  let resolveStatus: (s: number) => void = () => {};
  const status = new Promise<number>((resolve) => {
    resolveStatus = resolve;
  });
  const req = connection(target, credentials, 'GET', path, { accept: 'application/json' });
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      resolveStatus(0);
      push('end');
    }
  };
  req.on('error', (err) => {
    failure ??= err;
    end();
  });
  req.once('response', (res) => {
    resolveStatus(res.statusCode ?? 0);
    let buffered = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) push(parseJson(line) as unknown as WatchEvent);
      }
    });
    res.once('end', () => {
      // A non-watch answer (an error Status) arrives as one JSON body without a newline.
      const rest = buffered.trim();
      if (rest) push(parseJson(rest) as unknown as WatchEvent);
      end();
    });
    res.on('error', end);
    res.once('close', end);
  });
  req.end();

  const next = (timeoutMs = 15_000): Promise<WatchEvent | 'end'> => {
    const ready = queue.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (ended) return Promise.resolve('end');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no watch event on ${path} within ${timeoutMs} ms${failure ? ` (${failure.message})` : ''}`));
      }, timeoutMs);
      const waiter = (e: WatchEvent | 'end') => {
        clearTimeout(timer);
        resolve(e);
      };
      waiters.push(waiter);
    });
  };

  return {
    status,
    next,
    async until(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      const seen: WatchEvent[] = [];
      for (;;) {
        const e = await next(Math.max(1, deadline - Date.now()));
        if (e === 'end') throw new Error(`watch on ${path} ended before the expected event; saw ${JSON.stringify(seen.map((s) => s.type))}`);
        seen.push(e);
        if (match(e)) return { event: e, seen };
      }
    },
    close() {
      req.destroy();
    },
  };
}

/**
 * A request to the cluster as the test itself (the admin's client certificate, never revoked), for
 * whole-flow tests: the body of a 2xx answer, an error with the server's words otherwise.
 */
export function adminKube(target: () => ClusterTarget): (path: string, method?: string, body?: unknown) => Promise<Json> {
  return async (path, method = 'GET', body) => {
    const t = target();
    const res = await kubeRequest(t, t.auth.adminCert, path, { method, ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body ?? {};
  };
}
