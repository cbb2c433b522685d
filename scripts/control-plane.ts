import { join, resolve } from 'node:path';
import { createApp } from '../functions/app.ts';
import { startApiServer } from '../functions/node.ts';
import type { Clock } from '../shared/clock.ts';
import { systemClock } from '../shared/clock.ts';
import { loadDriverConfig, resolveDriverConfigPath } from '../shared/driver-config/load.ts';
import { driverConfigSource } from '../shared/driver-config/source.ts';
import type { Logger } from '../shared/log.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/embedded.ts';
import { rankTotal } from '../shared/table/rank.ts';
import { syncDefinitionSources } from '../shared/table/sources.ts';

export interface ControlPlaneOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  logger: Logger;
  clock?: Clock;
}

export interface ControlPlane {
  apiUrl: string;
  table: EmbeddedTable;
  dataDir: string;
  driverConfig: string;
  close(): Promise<void>;
}

/**
 * The local control plane: the embedded table on disk under `VENDOR_DATA_DIR` (default `./.data`),
 * the driver-defined accounts of the driver config file synced into it, and the API on `PORT`
 * (default 8080) at `HOST` (default 127.0.0.1).
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { env, cwd, logger } = options;
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(cwd, env.VENDOR_DATA_DIR ?? '.data');
  const driverConfig = resolveDriverConfigPath(env, cwd);
  const port = parsePort(env.PORT, 8080);
  const config = await loadDriverConfig(driverConfig);

  const table = await startEmbeddedTable({ path: join(dataDir, 'table') });
  try {
    const synced = await syncDefinitionSources(table, [driverConfigSource(config)], clock.now());
    const result = synced['driver-config'];
    logger.info(
      { driverConfig, added: result?.upserted.length, removed: result?.removed.length, unchanged: result?.unchanged },
      'driver-defined accounts loaded',
    );
    const app = createApp({ table, clock, logger });
    const server = await startApiServer(app, { port, hostname: env.HOST ?? '127.0.0.1' });
    logger.info({ accounts: await rankTotal(table), dataDir }, `API listening on ${server.url}`);
    return {
      apiUrl: server.url,
      table,
      dataDir,
      driverConfig,
      close: async () => {
        await server.close();
        await table.close();
      },
    };
  } catch (err) {
    await table.close();
    throw err;
  }
}

function parsePort(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got "${raw}"`);
  return port;
}
