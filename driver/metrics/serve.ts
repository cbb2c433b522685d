import type { DriverMetricsConfig } from '../../shared/driver-config/metrics.ts';
import type { Logger } from '../../shared/log.ts';
import type { DriverMetrics } from './metrics.ts';
import { startDriverMetricsServer, type DriverMetricsServer } from './server.ts';

/** The endpoint `metrics` of `vendor-driver.yml` asks for, if it is enabled; `port` overrides the file's (METRICS_PORT). */
export async function serveDriverMetrics(config: DriverMetricsConfig | undefined, metrics: DriverMetrics, log: Logger, port?: number): Promise<DriverMetricsServer | undefined> {
  if (config?.enabled !== true) return undefined;
  const server = await startDriverMetricsServer({ registry: metrics.registry, host: config.host, port: port ?? config.port });
  log.info({ url: server.url }, 'metrics listening');
  return server;
}
