import type { Context, MiddlewareHandler } from 'hono';
import { VendorError } from '../../shared/errors.ts';
import { problemResponse } from '../http.ts';
import { consoleAssetCache, defaultConsoleDir } from './asset-store.ts';
import { consoleContentSecurityPolicy } from './csp.ts';
import { DEFAULT_CONSOLE_SETTINGS, type ConsoleOptions } from './settings.ts';
import { ASSETS_PATH, consoleShell } from './shell.ts';

export const CONSOLE_PATH = '/ui';

/** Hashed names never change content: a year, and never revalidated. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** `/ui` and everything under it: served without credentials, since none of it holds data. */
export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

function wantsHtml(c: Context): boolean {
  return /\btext\/html\b/i.test(c.req.header('accept') ?? '');
}

/** The headers the console's answers carry besides the common ones (functions/security.ts). */
export function consolePolicy(options: ConsoleOptions = {}): (path: string) => { contentSecurityPolicy: string } | undefined {
  const contentSecurityPolicy = consoleContentSecurityPolicy(options.connectOrigins);
  return (path) => (isConsolePath(path) ? { contentSecurityPolicy } : undefined);
}

/**
 * The web console (docs/console.md): its page shell on `/ui` and every path under it (deep links of
 * the client's router), its hashed assets under `/ui/assets/`, its settings at `/ui/settings.json`,
 * and a browser's `GET /` sent on to `/ui/`. Everything else passes through to the API.
 */
export function consolePages(options: ConsoleOptions = {}): MiddlewareHandler {
  const assets = consoleAssetCache(options.dir ?? defaultConsoleDir());
  const settings = JSON.stringify(options.settings ?? DEFAULT_CONSOLE_SETTINGS);
  return async (c, next) => {
    const path = c.req.path;
    const reading = c.req.method === 'GET' || c.req.method === 'HEAD';
    if (path === '/' && reading && wantsHtml(c)) return c.redirect(`${CONSOLE_PATH}/`, 302);
    if (!isConsolePath(path)) return next();
    if (!reading) return problemResponse(c, new VendorError('not_found', `no route for ${c.req.method} ${path}`));
    if (path === `${CONSOLE_PATH}/settings.json`) return c.body(settings, 200, { 'content-type': 'application/json' });
    const built = assets();
    if (built === undefined) return problemResponse(c, new VendorError('unavailable', 'the console is not built: run `npm run build:console`'));
    if (path.startsWith(ASSETS_PATH)) {
      const asset = built.files.get(path.slice(ASSETS_PATH.length));
      if (asset === undefined) return problemResponse(c, new VendorError('not_found', `no console asset ${path}`));
      return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { 'content-type': asset.contentType, 'cache-control': IMMUTABLE });
    }
    // The shell is small and names the current hashed assets: always asked for again.
    return c.body(consoleShell(built.manifest), 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
  };
}
