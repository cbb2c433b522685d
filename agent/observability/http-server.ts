import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as TlsServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface RunningHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:8082`, with the port actually bound (port 0 picks one). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts an HTTP(S) server on host:port and resolves once it listens; a bind error rejects. */
export async function startHttpServer(options: { host: string; port: number; handler: Handler; tls?: TlsServerOptions }): Promise<RunningHttpServer> {
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    Promise.resolve(options.handler(req, res)).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    });
  };
  const server: Server = options.tls === undefined ? createHttpServer(listener) : createHttpsServer(options.tls, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, family, address } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The path of a request without its query string. */
export function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://local').pathname;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

export function sendText(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(body.endsWith('\n') ? body : `${body}\n`);
}

/** Only GET and HEAD are served; answers 405 for anything else and says so. */
export function onlyGet(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  res.setHeader('allow', 'GET, HEAD');
  sendText(res, 405, 'method not allowed');
  return false;
}
