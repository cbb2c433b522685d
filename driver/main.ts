/**
 * The driver process (the container's entry point, `npm run driver`): reads `vendor-driver.yml`,
 * syncs its driver-defined accounts into the table, serves agents until SIGTERM or SIGINT, then
 * reports NOT_SERVING, ends every stream and exits 0.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock, type Clock } from '../shared/clock.ts';
import { driverConfigSource } from '../shared/driver-config/source.ts';
import { isVendorError, VendorError } from '../shared/errors.ts';
import { createLogger, type Logger } from '../shared/log.ts';
import { isProductionEnv } from '../shared/production.ts';
import { tableFromEnv, type TableRef } from '../shared/table/core/client.ts';
import { syncDefinitionSources } from '../shared/table/sources/definition-sources.ts';
import { endpointConfig, loadDriverFile, type DriverFile, type DriverGrpcConfig } from './config.ts';
import { DRIVER_MODULES } from './modules.ts';
import { startDriver, type Driver } from './server.ts';

const USAGE = `usage: vendor-driver [--config FILE]

FILE defaults to VENDOR_DRIVER_CONFIG, then ./vendor-driver.yml.
The table comes from VENDOR_TABLE_NAME or the SST link VendorTable (VENDOR_DYNAMODB_ENDPOINT for another endpoint);
agent identities and tokens from auth of the file and from the table; fleet-wide tokens from auth.tokens (refused
when VENDOR_ENV=production, as the deployed driver runs). GRPC_PORT overrides grpc.port.
`;

/** How long shutdown may take before the process exits anyway. */
export const SHUTDOWN_TIMEOUT_MS = 15_000;
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
}

/** Syncs the file's driver-defined accounts into the table and starts the endpoint with every module. */
export async function startDriverProcess(options: DriverProcessOptions): Promise<Driver> {
  const { file, table, log } = options;
  const clock = options.clock ?? systemClock;
  const base = endpointConfig(file);
  const config: DriverGrpcConfig = {
    ...base,
    grpc: { ...base.grpc, ...(options.host === undefined ? {} : { host: options.host }), ...(options.port === undefined ? {} : { port: options.port }) },
  };
  const synced = (await syncDefinitionSources(table, [driverConfigSource(file)], clock.now()))['driver-config'];
  log.info({ added: synced?.upserted.length, removed: synced?.removed.length, unchanged: synced?.unchanged }, 'driver-defined accounts loaded');
  return startDriver({ config, table, log, clock, modules: DRIVER_MODULES, production: options.production ?? false });
}

export function parsePort(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new VendorError('invalid_input', `${name} must be an integer from 0 to 65535, got "${raw}"`);
  return port;
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const log = createLogger({ format: env.VENDOR_LOG_FORMAT === 'json' ? 'json' : 'text', base: { component: 'driver' } });
  let args;
  try {
    args = parseArgs({ args: [...argv], options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let driver: Driver;
  try {
    const path = resolve(args.config ?? (env.VENDOR_DRIVER_CONFIG || 'vendor-driver.yml'));
    const file = await loadDriverFile(path);
    const port = parsePort(env.GRPC_PORT, 'GRPC_PORT');
    log.info({ config: path }, 'driver configuration loaded');
    const production = isProductionEnv(env);
    log.info({ production }, production ? 'production mode (VENDOR_ENV=production)' : 'not in production mode');
    driver = await startDriverProcess({ file, table: tableFromEnv(env), log, production, ...(port === undefined ? {} : { port }) });
  } catch (e) {
    // A bad file or setting is the operator's to fix: say what is wrong, without a stack trace.
    log.fatal({ issues: isVendorError(e) ? e.issues : undefined }, `the driver did not start: ${(e as Error).message}`);
    return 1;
  }
  return new Promise<number>((resolveExit) => {
    const stop = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'stopping: health NOT_SERVING, ending agent streams');
      const timer = setTimeout(() => {
        log.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'shutdown took too long; exiting');
        resolveExit(1);
      }, SHUTDOWN_TIMEOUT_MS);
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
  process.exitCode = await main(process.argv.slice(2));
  process.exit();
}
