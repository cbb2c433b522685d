/**
 * One HTTP request from the API to a replica's wake port (a result ask, a reservation ask) and its
 * answer. Both asks read an answer the same way: a body only with the status that carries one, and
 * only up to a bound, so a replica (or whatever answers in its place) cannot make the API buffer
 * more than the message it expects.
 */
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import type { WakeTarget } from './target.ts';

/**
 * The keep-alive connections to the replicas: one pool for the result asks and the reservation asks
 * (WakeSender makes it), so a warm Lambda function skips the TCP handshake for either.
 */
export function replicaConnections(): Agent {
  return new Agent({ keepAlive: true, maxFreeSockets: 16 });
}

/** What every ask of the API to the replicas needs: where they listen, the wake secret, a clock and a pool of connections. */
export interface ReplicaAskOptions {
  /** Where the replicas of some agents listen (WakeSender.addresses). */
  replicas: { addresses(targets: readonly WakeTarget[]): Promise<string[]> };
  secret: string;
  clock: Clock;
  /** The pool of connections to the replicas (`replicaConnections()`), when shared with the other asks; else one of its own. */
  connections?: Agent;
}

export interface ReplicaRequest {
  host: string;
  port: number;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** The caller's keep-alive agent: a warm Lambda function skips the TCP handshake. */
  agent: Agent;
  signal: AbortSignal;
  /** Idle time on the socket after which the request is given up (`broken`). */
  timeoutMs?: number;
  /** The status whose answer has a body to read. */
  okStatus: number;
  maxBodyBytes: number;
  /** Called as the request is written (the path trace's mark). */
  sent?(): void;
}

/**
 * The status and headers, and for `okStatus` the body: `oversized` past `maxBodyBytes` (read no
 * further, the connection dropped), `undefined` for any other status. `broken` when no answer came:
 * the connection failed, was cut, timed out or the signal aborted.
 */
export type ReplicaAnswer = { status: number; headers: IncomingHttpHeaders; body: string | undefined | 'oversized' } | 'broken';

export function requestReplica(r: ReplicaRequest): Promise<ReplicaAnswer> {
  return new Promise<ReplicaAnswer>((resolve) => {
    const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = request(
      { host: r.host, port: r.port, path: r.path, method: r.method, headers, agent: r.agent, signal: r.signal, ...(r.timeoutMs === undefined ? {} : { timeout: r.timeoutMs }) },
      (res) => {
        const status = res.statusCode ?? 0;
        res.once('error', () => resolve('broken'));
        if (status !== r.okStatus) {
          res.resume();
          res.once('end', () => resolve({ status, headers: res.headers, body: undefined }));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= r.maxBodyBytes) chunks.push(chunk);
          else {
            resolve({ status, headers: res.headers, body: 'oversized' });
            res.destroy();
          }
        });
        res.once('end', () => resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve('broken'));
    r.sent?.();
    req.end(r.body);
  });
}
