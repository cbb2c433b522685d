import { dirname, join, resolve } from 'node:path';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import { consoleOptionsWithOidc } from '../functions/console/oidc-settings.ts';
import { isProductionMode, openAccountMode } from '../functions/auth/settings.ts';
import { accessOfSettings } from '../shared/accounts/permissions.ts';
import { startApiServer } from '../functions/node.ts';
import { endpointConfig, loadDriverFile } from '../driver/config.ts';
import { parsePort } from '../driver/main.ts';
import { DRIVER_MODULES } from '../driver/modules.ts';
import { startDriver, type Driver } from '../driver/server.ts';
import { startConfiguredSources } from '../driver/sources/configured.ts';
import type { Clock } from '../shared/clock.ts';
import { systemClock } from '../shared/clock.ts';
import { resolveDriverConfigPath } from '../shared/driver-config/load.ts';
import { driverConfigSource } from '../shared/driver-config/source.ts';
import type { Logger } from '../shared/log.ts';
import { OperationEvents } from '../shared/operations/events.ts';
import { ensureAccessIndex } from '../shared/table/accounts/access.ts';
import { VendorError } from '../shared/errors.ts';
import { isLoopback } from '../shared/loopback.ts';
import type { DriverConfig } from '../shared/driver-config/schema.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/core/embedded.ts';
import { privateDataFolder } from './data-folder.ts';
import { ensureRankIndex, rankTotal } from '../shared/table/accounts/rank.ts';
import { ensureFacetIndex } from '../shared/table/accounts/facets.ts';
import { moveEarlierLayout } from '../shared/table/layout-move.ts';
import { syncDefinitionSources } from '../shared/table/sources/definition-sources.ts';
import { LOCAL_ACCOUNT, LOCAL_ZONE, localAccountSource, localIdentity, localKubeconfig, localToken, startLocalAgent, type LocalAgent } from './local-agent.ts';

export interface ControlPlaneOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  logger: Logger;
  clock?: Clock;
}

export interface ControlPlane {
  apiUrl: string;
  /** `host:port` of the driver's gRPC endpoint. */
  grpcAddress: string;
  table: EmbeddedTable;
  dataDir: string;
  driverConfig: string;
  /**
   * Whether the API takes the committed example's admin token: known to everyone and accepted from
   * loopback only, so it is no secret and may be shown to the user who started the plane.
   */
  exampleAdminToken: boolean;
  /** The agent child process, when a kubeconfig was given. */
  agent: LocalAgent | undefined;
  close(): Promise<void>;
}

/** The admin token of the committed `vendor-driver.example.yml`: known to everyone, so loopback only. */
export const EXAMPLE_ADMIN_TOKEN = 'local-admin-token-for-npm-start-only-change-me';

/** Why the admin token may not be served on `host`; undefined when it may. */
function adminTokenRefusal(adminToken: string | undefined, offLoopback: boolean, file: string, host: string): string | undefined {
  if (adminToken === undefined || isLoopback(host)) return undefined;
  if (adminToken === EXAMPLE_ADMIN_TOKEN) return `the admin token of the example config is known to everyone; set your own api.auth.adminToken in ${file} before serving on ${host}`;
  if (offLoopback) return undefined;
  return `the admin token may do everything and is for this machine only: serve on a loopback address, use OIDC, or set api.auth.adminTokenOffLoopback: true in ${file} to accept it on ${host}`;
}

/**
 * The API's authentication from `api.auth` of the driver config. Never off: a file with neither an
 * OIDC issuer nor an admin token is refused, as is the admin token in production mode
 * (`VENDOR_ENV=production`), any admin token on an address other than loopback unless
 * `api.auth.adminTokenOffLoopback` allows it, and the example's well-known token there in any case.
 */
function apiAuthOf(config: DriverConfig, file: string, host: string, options: ControlPlaneOptions, clock: Clock) {
  const { adminToken, adminTokenOffLoopback, oidc } = config.api.auth;
  const refusal = adminTokenRefusal(adminToken, adminTokenOffLoopback === true, file, host);
  if (refusal !== undefined) throw new VendorError('invalid_input', refusal, { issues: [{ path: 'api.auth.adminToken', message: refusal }] });
  const production = isProductionMode(options.env, { lambda: false });
  const auth = createApiAuth(config.api.auth, { production, clock, logger: options.logger });
  const openAccounts = openAccountMode(config.api.auth, production);
  options.logger.info(
    { openAccounts },
    openAccounts === 'readWrite'
      ? 'accounts without usable permissions may be read and written by every API caller (api.auth.openAccounts)'
      : 'accounts without usable permissions may be read by every API caller and written by account managers only (api.auth.openAccounts)',
  );
  if (adminToken !== undefined) {
    options.logger.warn(
      { driverConfig: file, example: adminToken === EXAMPLE_ADMIN_TOKEN, offLoopback: adminTokenOffLoopback === true },
      adminTokenOffLoopback === true
        ? 'the API accepts the static admin token of api.auth.adminToken from any address (api.auth.adminTokenOffLoopback; refused in production mode)'
        : 'the API accepts the static admin token of api.auth.adminToken from loopback only: for local use (refused in production mode)',
    );
  }
  if (oidc !== undefined) options.logger.info({ issuer: oidc.issuer, audience: oidc.audience, rolesClaim: oidc.rolesClaim }, 'API callers are authenticated by OIDC bearer tokens');
  return auth;
}

/** docs/agent-config.md#permissions, said loudly at start: accounts whose permissions are not applied. */
function warnIgnoredPermissions(config: DriverConfig, logger: Logger): void {
  config.kubernetes.accounts.forEach((account, i) => {
    const access = accessOfSettings(account);
    if (access.kind === 'ignored') {
      logger.warn({ account: account.name, path: `kubernetes.accounts[${i}].permissions`, reason: access.reason }, 'account permissions are NOT applied: it is open to every caller like an account without permissions');
    }
  });
}

/**
 * The local control plane: the embedded table on disk under `VENDOR_DATA_DIR` (default `./.data`, this
 * user's alone: scripts/data-folder.ts),
 * the driver-defined accounts of the driver config file synced into it (and those of its
 * configuration server and plugins, kept synced), the API on `PORT` (default
 * 8080) at `VENDOR_API_HOST` (default 127.0.0.1), authenticated as `api.auth` says, and the driver's
 * gRPC endpoint on `GRPC_PORT` (default 9091) at `VENDOR_GRPC_HOST` (default 127.0.0.1) against the
 * same table. With a kubeconfig (`VENDOR_LOCAL_KUBECONFIG`, else `KUBECONFIG`) it also defines the
 * driver account `local` for it and runs an agent (scripts/local-agent.ts) that connects to the
 * driver with a generated local token.
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { env, cwd, logger } = options;
  const clock = options.clock ?? systemClock;
  const dataDir = resolve(cwd, env.VENDOR_DATA_DIR ?? '.data');
  const driverConfig = resolveDriverConfigPath(env, cwd);
  const port = parsePort(env.PORT, 'PORT') ?? 8080;
  const grpcPort = parsePort(env.GRPC_PORT, 'GRPC_PORT') ?? 9091;
  const agentHealthPort = parsePort(env.VENDOR_AGENT_HEALTH_PORT, 'VENDOR_AGENT_HEALTH_PORT') ?? 8082;
  const grpcHost = env.VENDOR_GRPC_HOST ?? '127.0.0.1';
  const file = await loadDriverFile(driverConfig);
  const kubeconfig = localKubeconfig(env, cwd);
  const host = env.VENDOR_API_HOST ?? '127.0.0.1';
  const auth = apiAuthOf(file, driverConfig, host, options, clock);
  warnIgnoredPermissions(file, logger);

  privateDataFolder(dataDir);
  // dynalite has no TTL: expired operations, feed entries and sessions are swept here instead.
  const ttlSweep = { clock, onError: (err: unknown) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'expired-item sweep failed; trying again') };
  const table = await startEmbeddedTable({ path: join(dataDir, 'table'), ttlSweep });
  const stops: (() => Promise<void>)[] = [() => table.close()];
  const closeAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    await moveEarlierLayout(table, logger);
    if (await ensureRankIndex(table)) logger.warn('rank index was missing and has been rebuilt');
    if (await ensureAccessIndex(table)) logger.info('access index built');
    if (await ensureFacetIndex(table)) logger.info('facet index built');
    const synced = await syncDefinitionSources(table, [driverConfigSource(file), localAccountSource(kubeconfig)], clock.now());
    const result = synced['driver-config'];
    logger.info(
      { driverConfig, added: result?.upserted.length, removed: result?.removed.length, unchanged: result?.unchanged },
      'driver-defined accounts loaded',
    );
    const sources = await startConfiguredSources({ config: file.sources, baseDir: dirname(driverConfig), table, log: logger, clock });
    stops.push(() => sources.stop());
    // The API's new operations wake the driver's dispatcher in this process at once.
    const operationEvents = new OperationEvents();
    const corsOrigins = file.api.cors?.allowOrigins ?? [];
    if (corsOrigins.length > 0) logger.info({ origins: corsOrigins }, 'browsers on these origins may call the API (CORS)');
    const app = createApp({ table, clock, logger, auth, corsOrigins, operationEvents, console: consoleOptionsWithOidc(file.api.auth.oidc) });
    const server = await startApiServer(app, { port, hostname: host });
    stops.push(() => server.close());
    logger.info({ accounts: await rankTotal(table), dataDir }, `API listening on ${server.url}`);

    const token = localToken(dataDir);
    const base = endpointConfig(file, [localIdentity(token)]);
    const driver: Driver = await startDriver({
      config: { ...base, grpc: { ...base.grpc, host: grpcHost, port: grpcPort } },
      table,
      log: logger.child({ component: 'driver' }),
      clock,
      modules: DRIVER_MODULES,
      operationEvents,
      production: isProductionMode(env, { lambda: false }),
    });
    stops.push(() => driver.close(2_000));
    const grpcAddress = `${grpcHost.includes(':') ? `[${grpcHost}]` : grpcHost}:${driver.port}`;
    logger.info({ tokenFile: join(dataDir, 'agent-token') }, `driver listening on ${grpcAddress} (gRPC; the local agent authenticates as identity ${localIdentity(token).name} with the token in the token file)`);

    let agent: LocalAgent | undefined;
    if (kubeconfig !== undefined) {
      agent = startLocalAgent({
        dataDir,
        kubeconfig,
        driverPort: driver.port,
        token,
        healthPort: agentHealthPort,
        logFormat: env.VENDOR_LOG_FORMAT === 'json' ? 'json' : 'text',
        env,
        logger,
      });
      const running = agent;
      stops.push(() => running.stop());
      logger.info(
        { pid: agent.pid, config: agent.configPath, kubeconfig, zoneId: `${LOCAL_ZONE.deployment}_${LOCAL_ZONE.namespace}` },
        `agent started for account "${LOCAL_ACCOUNT}": POST and PATCH it to see it ACTIVE`,
      );
    } else {
      logger.info('no agent started: set KUBECONFIG (or VENDOR_LOCAL_KUBECONFIG) to run one');
    }
    return { apiUrl: server.url, grpcAddress, table, dataDir, driverConfig, exampleAdminToken: file.api.auth.adminToken === EXAMPLE_ADMIN_TOKEN, agent, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
