import type { Context, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { secureHeaders } from 'hono/secure-headers';

/** One year; sent only on answers that went over TLS (RFC 6797 7.2 forbids it on plain HTTP). */
export const HSTS = 'max-age=31536000; includeSubDomains';

/** Request headers a browser on an allowed origin may send (the bearer token, JSON bodies, idempotency keys). */
const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key'];
/** Answer headers such a caller may read. */
const CORS_EXPOSED_HEADERS = ['Location', 'Retry-After', 'WWW-Authenticate', 'Idempotent-Replayed'];

/** The request came over TLS: to this process, or to the proxy or gateway in front of it (`X-Forwarded-Proto`). */
function overTls(c: Context): boolean {
  if (c.req.url.startsWith('https:')) return true;
  return c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** Headers of paths that serve pages rather than API answers (the console, functions/console/pages.ts). */
export interface PagePolicy {
  contentSecurityPolicy: string;
}

/**
 * Headers on every answer, errors included (docs/api.md, "Security headers"). The API serves JSON to
 * programs, never pages: nothing may be framed, sniffed as another type, run as script or cached
 * (answers carry account data for one caller's credentials). Paths `pagePolicy` claims serve pages
 * instead: they get its Content-Security-Policy, and keep a `Cache-Control` the page set itself.
 */
export function securityHeaders(pagePolicy: (path: string) => PagePolicy | undefined = () => undefined): MiddlewareHandler {
  const standard = secureHeaders({
    contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    xFrameOptions: 'DENY',
    // Set below, only over TLS.
    strictTransportSecurity: false,
  });
  return async (c, next) => {
    await standard(c, next);
    const page = pagePolicy(c.req.path);
    if (page !== undefined) c.res.headers.set('Content-Security-Policy', page.contentSecurityPolicy);
    if (page === undefined || !c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
    if (overTls(c)) c.res.headers.set('Strict-Transport-Security', HSTS);
  };
}

/**
 * Cross-origin access for browsers on the given origins (exact `scheme://host[:port]` strings). Off
 * unless origins are given: without CORS headers a browser lets no other origin read an answer.
 * Preflights are answered before authentication, since browsers send them without credentials.
 */
export function corsFor(origins: readonly string[]): MiddlewareHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: [...origins],
    allowMethods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowHeaders: CORS_REQUEST_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
}
