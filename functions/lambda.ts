import { handle } from 'hono/aws-lambda';
import { systemClock } from '../shared/clock.ts';
import { isVendorError } from '../shared/errors.ts';
import { createLogger } from '../shared/log.ts';
import { pathTrace } from '../shared/operations/path-trace.ts';
import { tableFromEnv } from '../shared/table/core/client.ts';
import { wakeSecretFromEnv } from '../shared/wake/secret.ts';
import { createApp } from './app.ts';
import { createApiAuth } from './auth/authenticator.ts';
import { apiAuthFromLinks, isProductionMode } from './auth/settings.ts';
import { consoleOptionsWithOidc } from './console/oidc-settings.ts';
import { reserveWaitFromEnv } from './wake/reserver.ts';
import { WakeSender } from './wake/sender.ts';

const logger = createLogger({ base: { component: 'api' } });

/**
 * How long an invocation waits, after its response is made, for the wakes it started to go out: a
 * Lambda environment is frozen once the handler returns, and a wake still waiting then would leave
 * late (harmless, but useless).
 */
export const WAKE_SETTLE_MS = 100;

function apiAuth() {
  try {
    const config = apiAuthFromLinks(process.env);
    return { config, auth: createApiAuth(config, { production: isProductionMode(process.env, { lambda: true }), logger }) };
  } catch (err) {
    // Refuse to serve at all rather than serve unauthenticated: say why once, plainly, in the log.
    logger.error({ issues: isVendorError(err) ? err.issues : undefined }, (err as Error).message);
    throw err;
  }
}

const table = tableFromEnv();
const secret = wakeSecretFromEnv(process.env);
const reserveWaitMs = reserveWaitFromEnv(process.env);
const wakes = secret === undefined ? undefined : new WakeSender({ table, clock: systemClock, log: logger.child({ component: 'wake' }), secret, ...(reserveWaitMs === undefined ? {} : { reserveWaitMs }) });
const { config, auth } = apiAuth();
const app = handle(createApp({ table, logger, auth, console: consoleOptionsWithOidc(config.oidc), ...(wakes === undefined ? {} : { wakes }) }));

/**
 * The AWS Lambda entry point: the same app as the Node server, with the deployed table (name from
 * `VENDOR_TABLE_NAME` or the SST link) and callers authenticated by the OIDC issuer of the SST links
 * (production mode: no admin token), and the console signing in there when a console client is
 * linked. With the wake secret linked (`VendorWakeSecret`), writes of work wake the driver replicas
 * concerned, and a request waiting for an operation asks them when it has finished (result asks,
 * docs/protocol.md#6b-wakes). Built once per container, reused across invocations.
 */
export const handler: typeof app = async (event, context) => {
  // The path trace (bench only) knows the request by its Idempotency-Key here: it has no operation id yet.
  const traced = pathTrace === undefined ? undefined : (event as { headers?: Record<string, string | undefined> }).headers?.['idempotency-key'];
  if (traced !== undefined) pathTrace?.('api.invoked', traced);
  const response = await app(event, context);
  await wakes?.settled(WAKE_SETTLE_MS);
  if (traced !== undefined) pathTrace?.('api.returned', traced);
  return response;
};
