import { isVendorError } from '../shared/errors.ts';
import { createLogger } from '../shared/log.ts';
import { EXAMPLE_ADMIN_TOKEN, startControlPlane, type ControlPlane } from './control-plane.ts';

// `npm start`: the local control plane until SIGINT or SIGTERM.
// Whatever it creates (the table's files as the store writes them, the agent's files) is this user's
// alone, as the data folder is (scripts/data-folder.ts).
process.umask(0o077);
const logger = createLogger({ format: process.env.VENDOR_LOG_FORMAT === 'json' ? 'json' : 'text', base: { component: 'control-plane' } });

/**
 * Where to point a browser, and with what token. A token of the user's own is a credential and is
 * never printed (docs/console.md#sign-in); the committed example's is in the repository for anyone to
 * read and is taken from loopback only, so printing it gives nothing away and lets a first run sign in.
 */
function signInLine(plane: ControlPlane): string {
  const open = `console: open ${plane.apiUrl}/ in a browser and sign in with`;
  return plane.exampleAdminToken
    ? `${open} the example config's admin token ${EXAMPLE_ADMIN_TOKEN} (loopback only; set your own api.auth.adminToken in ${plane.driverConfig} to change it)`
    : `${open} the api.auth.adminToken of ${plane.driverConfig} (or a token of your identity provider)`;
}

try {
  const plane = await startControlPlane({ env: process.env, cwd: process.cwd(), logger });
  logger.info({ console: `${plane.apiUrl}/` }, signInLine(plane));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    plane.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stopped with an error');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (err) {
  // A bad config file is the operator's to fix: say what is wrong, without a stack trace.
  if (isVendorError(err) || err instanceof Error) logger.error({ issues: isVendorError(err) ? err.issues : undefined }, err.message);
  else logger.error(String(err));
  process.exit(1);
}
