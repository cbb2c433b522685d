import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import type { ObjectInput } from './test-store.ts';

/**
 * Raw HTTP for the test API server's own tests: exact status codes, headers and bodies, and watch
 * streams read line by line, with nothing of a Kubernetes client in between.
 */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; tests assert its shape with `toMatchObject` and read it with `at`. */
  json: unknown;
}

export interface RawOptions {
  method?: string;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** TLS material for https URLs. */
  ca?: string;
  cert?: string;
  key?: string;
}

function send(url: string, o: RawOptions): Promise<IncomingMessage> {
  const u = new URL(url);
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  const headers: Record<string, string> = { ...o.headers };
  if (body !== undefined) {
    headers['content-type'] = o.contentType ?? 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const options = { method: o.method ?? 'GET', headers, ca: o.ca, cert: o.cert, key: o.key };
  return new Promise((resolve, reject) => {
    const req = u.protocol === 'https:' ? httpsRequest(u, options, resolve) : httpRequest(u, options, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

export async function raw(base: string, path: string, o: RawOptions = {}): Promise<RawResponse> {
  const res = await send(base + path, o);
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

export interface WatchEvent {
  type: string;
  object: unknown;
}

export interface RawWatch {
  status: number;
  headers: IncomingHttpHeaders;
  /** Lines exactly as received. */
  lines: string[];
  /** The next event, or `undefined` when the stream ended; rejects after `ms` without one. */
  next(ms?: number): Promise<WatchEvent | undefined>;
  /** Events until `pred` holds for one (included). */
  until(pred: (e: WatchEvent) => boolean, ms?: number): Promise<WatchEvent[]>;
  ended: Promise<void>;
  close(): void;
}

export async function watch(base: string, path: string, o: RawOptions = {}): Promise<RawWatch> {
  const res = await send(base + path, o);
  const queue: WatchEvent[] = [];
  const lines: string[] = [];
  let done = false;
  let wake: (() => void) | undefined;
  const rl = createInterface({ input: res });
  rl.on('line', (line) => {
    lines.push(line);
    if (line.trim() === '') return;
    queue.push(JSON.parse(line) as WatchEvent);
    wake?.();
  });
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      done = true;
      wake?.();
      resolve();
    };
    rl.on('close', finish);
    rl.on('error', finish);
    res.on('error', finish);
  });
  const next = async (ms = 5000): Promise<WatchEvent | undefined> => {
    const deadline = Date.now() + ms;
    while (queue.length === 0 && !done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
    return queue.shift();
  };
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    lines,
    next,
    until: async (pred, ms = 5000) => {
      const seen: WatchEvent[] = [];
      for (;;) {
        const e = await next(ms);
        if (e === undefined) throw new Error(`watch ended before the expected event; saw ${JSON.stringify(seen.map((x) => x.type))}`);
        seen.push(e);
        if (pred(e)) return seen;
      }
    },
    ended,
    close: () => res.destroy(),
  };
}

/** Reads a dotted path (`metadata.resourceVersion`, `items.0.metadata.name`) of parsed JSON. */
export function at(value: unknown, path: string): unknown {
  let cur = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function str(value: unknown, path: string): string {
  const v = at(value, path);
  if (typeof v !== 'string') throw new Error(`${path} is not a string: ${JSON.stringify(v)}`);
  return v;
}

export function items(value: unknown): unknown[] {
  const v = at(value, 'items');
  if (!Array.isArray(v)) throw new Error(`no items in ${JSON.stringify(value).slice(0, 200)}`);
  return v;
}

export function names(value: unknown): string[] {
  return items(value).map((i) => str(i, 'metadata.name'));
}

export function pod(name: string, namespace = 'default', labels: Record<string, string> = {}): ObjectInput {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } };
}

export function deployment(name: string, namespace = 'default', replicas = 1): ObjectInput {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
    },
  };
}
