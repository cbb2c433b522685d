/**
 * The driver's Prometheus endpoint on `metrics.host`:`metrics.port` (docs/metrics.md): GET /metrics.
 * A port of its own, apart from gRPC, so a scraper needs no agent credential and the agent port
 * carries agents only.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { VendorError } from '../../shared/errors.ts';

export interface DriverMetricsServer {
  /** `http://host:port`, with the port actually bound (port 0 picks one). */
  readonly url: string;
  close(): Promise<void>;
}

export async function startDriverMetricsServer(options: { registry: Registry; host: string; port: number }): Promise<DriverMetricsServer> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    } else if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are on /metrics\n');
    } else {
      options.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(body),
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${e instanceof Error ? e.message : String(e)}\n`),
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new VendorError('unavailable', `cannot serve metrics on ${options.host}:${options.port}: ${e.code ?? e.message}`, { cause: e })),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const { port, family, address } = server.address() as AddressInfo;
  return {
    url: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
