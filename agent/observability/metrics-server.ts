import type { Registry } from 'prom-client';
import { onlyGet, pathOf, sendText, startHttpServer, type RunningServer } from './http-server.ts';

export const METRICS_PATHS = ['/metrics', '/prometheus_metrics'] as const;

/**
 * The Prometheus endpoint on `prometheus.port`. It binds every interface by default because
 * Prometheus scrapes the pod address; `host` exists for tests and for operators who narrow it.
 */
export function startMetricsServer(options: { registry: Registry; port: number; host?: string }): Promise<RunningServer> {
  return startHttpServer({
    host: options.host ?? '0.0.0.0',
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
