import type { Clock } from '../../shared/clock.ts';
import { DEFAULT_SOURCE_REFRESH_INTERVAL_MS, type SourcesConfig } from '../../shared/driver-config/sources.ts';
import type { Logger } from '../../shared/log.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import type { DefinitionSource } from '../../shared/table/sources/definition-sources.ts';
import { configServerSource } from './config-server.ts';
import { pluginSource, type ModuleImport } from './plugins.ts';
import { startDefinitionSync, type DefinitionSync } from './sync.ts';

export interface ConfiguredSourcesOptions {
  /** `sources` of `vendor-driver.yml`; nothing is started without it. */
  config: SourcesConfig | undefined;
  /** Plugin paths are relative to this folder: the config file's. */
  baseDir: string;
  table: TableRef;
  log: Logger;
  clock: Clock;
  /** How plugin modules are imported; `import()` by default. */
  importModule?: ModuleImport;
}

/**
 * The configuration server and plugins of `sources`, synced into the table at once and then every
 * `refreshIntervalMs` (docs/deploy.md#account-definition-sources). The file's own accounts are synced
 * by the caller, once at start.
 */
export async function startConfiguredSources(options: ConfiguredSourcesOptions): Promise<DefinitionSync> {
  const { config, log } = options;
  const sources: DefinitionSource[] = [];
  const closers: (() => void)[] = [];
  if (config?.configServer !== undefined) {
    const { endpoint, region, bucket, key } = config.configServer.s3;
    // The S3 client is loaded only by a driver that has a configuration server.
    const { createS3ObjectReader } = await import('../../shared/sources/s3-object.ts');
    const reader = createS3ObjectReader(endpoint === undefined ? {} : { endpoint });
    closers.push(() => reader.close());
    sources.push(configServerSource(config.configServer, reader));
    log.info({ region, bucket, key, endpoint: endpoint ?? 'default' }, 'account definitions also come from the configuration server');
  }
  for (const entry of config?.plugins ?? []) {
    const source = pluginSource(entry, options.baseDir, options.importModule);
    sources.push(source);
    log.info({ source: source.id, path: entry.path, precedence: entry.precedence ?? 'none' }, 'account definitions also come from a plugin');
  }
  const sync = await startDefinitionSync({
    table: options.table,
    sources,
    log,
    clock: options.clock,
    intervalMs: config?.refreshIntervalMs ?? DEFAULT_SOURCE_REFRESH_INTERVAL_MS,
  });
  return {
    syncNow: sync.syncNow,
    async stop() {
      await sync.stop();
      for (const close of closers) close();
    },
  };
}
