import { handle } from 'hono/aws-lambda';
import { isVendorError } from '../shared/errors.ts';
import { createLogger } from '../shared/log.ts';
import { tableFromEnv } from '../shared/table/core/client.ts';
import { createApp } from './app.ts';
import { createApiAuth } from './auth/authenticator.ts';
import { apiAuthFromLinks, isProductionMode } from './auth/settings.ts';
import { consoleOptionsWithOidc } from './console/oidc-settings.ts';

const logger = createLogger({ base: { component: 'api' } });

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

/**
 * The AWS Lambda entry point: the same app as the Node server, with the deployed table (name from
 * `VENDOR_TABLE_NAME` or the SST link) and callers authenticated by the OIDC issuer of the SST links
 * (production mode: no admin token), and the console signing in there when a console client is
 * linked. Built once per container, reused across invocations.
 */
const { config, auth } = apiAuth();
export const handler = handle(createApp({ table: tableFromEnv(), logger, auth, console: consoleOptionsWithOidc(config.oidc) }));
