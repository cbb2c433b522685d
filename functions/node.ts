import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

export interface RunningServer {
  /** `http://<host>:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves the app over plain HTTP (local control plane, tests). Port 0 picks a free one. */
export async function startApiServer(app: { fetch: Hono['fetch'] }, options: { port?: number; hostname?: string } = {}): Promise<RunningServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? 0, hostname }, () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
