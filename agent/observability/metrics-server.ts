import type { Registry } from 'prom-client';
import { onlyGet, pathOf, sendText, startHttpServer, type RunningHttpServer } from './http-server.ts';

export const METRICS_PATHS = ['/metrics', '/prometheus_metrics'] as const;

/**
 * The Prometheus endpoint on `prometheus.host`:`prometheus.port`. Every interface by default
 * (agent/config/schema.ts), because Prometheus scrapes the pod address; operators may narrow it.
 */
export function startMetricsServer(options: { registry: Registry; port: number; host: string }): Promise<RunningHttpServer> {
  return startHttpServer({
    host: options.host,
    port: options.port,
    handler: async (req, res) => {
      if (!onlyGet(req, res)) return;
      if (!(METRICS_PATHS as readonly string[]).includes(pathOf(req))) {
        sendText(res, 404, `not found: metrics are on ${METRICS_PATHS.join(' and ')}`);
        return;
      }
      const body = await options.registry.metrics();
      res.writeHead(200, { 'content-type': options.registry.contentType });
      res.end(body);
    },
  });
}
