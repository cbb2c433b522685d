/**
 * The driver process (the container's entry point, `npm run driver`): reads `vendor-driver.yml`,
 * syncs its driver-defined accounts into the table (and keeps those of its configuration server and
 * plugins synced), serves agents until SIGTERM or SIGINT, then reports NOT_SERVING, ends every stream
 * and exits 0.
 */
import { dirname, resolve } from 'node:path';
import { systemClock, type Clock } from '../shared/clock.ts';
import { driverConfigSource } from '../shared/driver-config/source.ts';
import { isVendorError, VendorError } from '../shared/errors.ts';
import { createLogger, type Logger } from '../shared/log.ts';
import { isProductionEnv } from '../shared/production.ts';
import { parseConfigCommand } from '../shared/config-command.ts';
import { formatReport } from '../shared/config-report/report.ts';
import { VERSION } from '../shared/version.ts';
import { tableFromEnv, type TableRef } from '../shared/table/core/client.ts';
import { syncDefinitionSources } from '../shared/table/sources/definition-sources.ts';
import { keepMovingEarlierLayout, moveEarlierLayout } from '../shared/table/layout-move.ts';
import { endpointConfig, type DriverFile, type DriverGrpcConfig } from './config.ts';
import { DRIVER_MODULES } from './modules.ts';
import { serveDriverMetrics } from './metrics/serve.ts';
import type { DriverMetricsServer } from './metrics/server.ts';
import type { Driver } from './server.ts';
import { startWakeableDriver } from './wake/replica.ts';
import { wakeSecretFromEnv } from '../shared/wake/secret.ts';
import { startConfiguredSources } from './sources/configured.ts';
import { checkDriverFile } from './validate.ts';

const USAGE = `usage:
  vendor-driver [run] [--config FILE]            run the driver
  vendor-driver validate [FILE | --config FILE]  check the file; exit 0 when it is valid, 1 when not
  vendor-driver version                          print the version (also --version, -V)

FILE defaults to VENDOR_DRIVER_CONFIG, then ./vendor-driver.yml.
The table comes from VENDOR_TABLE_NAME or the SST link VendorTable (VENDOR_DYNAMODB_ENDPOINT for another endpoint);
the wake secret from VENDOR_WAKE_SECRET or the SST link VendorWakeSecret (wakes are off without one);
agent identities and tokens from auth of the file and from the table; fleet-wide tokens from auth.tokens (refused
when VENDOR_ENV=production, as the deployed driver runs). GRPC_PORT overrides grpc.port, METRICS_PORT metrics.port.
`;

/** How long shutdown may take before the process exits anyway. */
export const DRIVER_SHUTDOWN_TIMEOUT_MS = 15_000;
/** How long streams get to end on shutdown. */
const STREAM_GRACE_MS = 5_000;

export interface DriverProcessOptions {
  file: DriverFile;
  table: TableRef;
  log: Logger;
  /** Overrides of the file's `grpc.host` and `grpc.port`. */
  host?: string;
  port?: number;
  clock?: Clock;
  /** Production mode (`VENDOR_ENV=production`): fleet-wide tokens and plaintext on a network address are refused. */
  production?: boolean;
  /** The config file's folder, which plugin paths of `sources.plugins` are relative to; the working directory by default. */
  configDir?: string;
  /** Override of the file's `metrics.port`. */
  metricsPort?: number;
  /** The shared wake secret (`VENDOR_WAKE_SECRET` or the SST link); without it the replica takes no wakes. */
  wakeSecret?: string | undefined;
  /** How often the items of the earlier key layout are moved again while the replica runs (`LAYOUT_MOVE_INTERVAL_MS`). */
  layoutMoveIntervalMs?: number;
}

/**
 * Moves the account and operation items a table written before the shards keeps in one partition each
 * to their shards (and again every minute while it runs), syncs the file's driver-defined accounts
 * into the table, starts keeping those of its configuration server and plugins synced, and starts the
 * endpoint with every module.
 */
export async function startDriverProcess(options: DriverProcessOptions): Promise<Driver> {
  const { file, table, log } = options;
  const clock = options.clock ?? systemClock;
  const base = endpointConfig(file);
  const config: DriverGrpcConfig = {
    ...base,
    grpc: { ...base.grpc, ...(options.host === undefined ? {} : { host: options.host }), ...(options.port === undefined ? {} : { port: options.port }) },
  };
  // Before anything reads or writes an account or operation item: a table written before the shards keeps them in one partition each.
  await moveEarlierLayout(table, log);
  const syncStart = clock.now();
  const synced = (await syncDefinitionSources(table, [driverConfigSource(file)], syncStart))['driver-config'];
  // With thousands of definitions the first replica's sync is what its start waits for (docs/deploy.md#account-definition-sources).
  log.info({ added: synced?.upserted.length, removed: synced?.removed.length, unchanged: synced?.unchanged, ms: clock.now() - syncStart }, 'driver-defined accounts loaded');
  const sources = await startConfiguredSources({ config: file.sources, baseDir: options.configDir ?? process.cwd(), table, log, clock });
  let driver: Driver;
  let metrics: DriverMetricsServer | undefined;
  try {
    driver = await startWakeableDriver({ config, table, log, clock, modules: DRIVER_MODULES, production: options.production ?? false, wake: file.wake, wakeSecret: options.wakeSecret });
  } catch (e) {
    await sources.stop();
    throw e;
  }
  try {
    metrics = await serveDriverMetrics(file.metrics, driver.metrics, log, options.metricsPort);
  } catch (e) {
    await sources.stop();
    await driver.close(0);
    throw e;
  }
  // What a component of the earlier layout still writes during an update is moved while this replica runs.
  const moves = keepMovingEarlierLayout({ table, log, clock, intervalMs: options.layoutMoveIntervalMs });
  return {
    ...driver,
    close: async (graceMs) => {
      await moves.stop();
      await sources.stop();
      await driver.close(graceMs);
      await metrics?.close();
    },
  };
}

export function parsePort(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new VendorError('invalid_input', `${name} must be an integer from 0 to 65535, got "${raw}"`);
  return port;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** VENDOR_LOG_LEVEL: the driver's log level, `info` when unset or not a level (docs/protocol.md). */
export function logLevelFromEnv(raw: string | undefined): (typeof LOG_LEVELS)[number] {
  return LOG_LEVELS.find((l) => l === raw) ?? 'info';
}

export async function driverMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = createLogger({ format: env.VENDOR_LOG_FORMAT === 'json' ? 'json' : 'text', base: { component: 'driver' }, level: logLevelFromEnv(env.VENDOR_LOG_LEVEL) });
  if (env.VENDOR_LOG_LEVEL !== undefined && env.VENDOR_LOG_LEVEL !== '' && logLevelFromEnv(env.VENDOR_LOG_LEVEL) !== env.VENDOR_LOG_LEVEL) {
    log.warn({ given: env.VENDOR_LOG_LEVEL, levels: LOG_LEVELS }, 'VENDOR_LOG_LEVEL is not a log level: logging at info');
  }
  const command = parseConfigCommand(argv);
  const configPath = (given: string | undefined) => resolve(given ?? (env.VENDOR_DRIVER_CONFIG || 'vendor-driver.yml'));
  switch (command.name) {
    case 'usage':
      process.stderr.write(`${command.message}\n${USAGE}`);
      return 2;
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`vendor-driver ${VERSION}\n`);
      return 0;
    case 'validate': {
      const checked = await checkDriverFile(configPath(command.file));
      (checked.config === undefined ? process.stderr : process.stdout).write(formatReport(checked));
      return checked.config === undefined ? 1 : 0;
    }
  }
  // An invalid file is reported as `validate` reports it (every problem at its key path, with the
  // closest known key), before anything is connected.
  const path = configPath(command.file);
  const checked = await checkDriverFile(path);
  if (checked.config === undefined) {
    process.stderr.write(formatReport(checked));
    log.fatal({ config: path }, 'the driver did not start: its configuration file has problems (listed above)');
    return 1;
  }
  const file = checked.config;
  let driver: Driver;
  try {
    const port = parsePort(env.GRPC_PORT, 'GRPC_PORT');
    const metricsPort = parsePort(env.METRICS_PORT, 'METRICS_PORT');
    log.info({ config: path }, 'driver configuration loaded');
    const production = isProductionEnv(env);
    log.info({ production }, production ? 'production mode (VENDOR_ENV=production)' : 'not in production mode');
    driver = await startDriverProcess({ file, table: tableFromEnv(env), log, production, configDir: dirname(path), wakeSecret: wakeSecretFromEnv(env), ...(port === undefined ? {} : { port }), ...(metricsPort === undefined ? {} : { metricsPort }) });
  } catch (e) {
    // A bad file or setting is the operator's to fix: say what is wrong, without a stack trace.
    log.fatal({ issues: isVendorError(e) ? e.issues : undefined }, `the driver did not start: ${(e as Error).message}`);
    return 1;
  }
  return new Promise<number>((resolveExit) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'stopping: health NOT_SERVING, ending agent streams');
      const timer = setTimeout(() => {
        log.error({ timeoutMs: DRIVER_SHUTDOWN_TIMEOUT_MS }, 'shutdown took too long; exiting');
        resolveExit(1);
      }, DRIVER_SHUTDOWN_TIMEOUT_MS);
      timer.unref();
      driver.close(STREAM_GRACE_MS).then(
        () => {
          clearTimeout(timer);
          log.info('driver stopped');
          resolveExit(0);
        },
        (e: unknown) => {
          log.error({ err: e }, 'shutdown failed');
          resolveExit(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

if (import.meta.main) {
  process.exitCode = await driverMain(process.argv.slice(2));
  process.exit();
}
