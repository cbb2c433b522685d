import type { MiddlewareHandler } from 'hono';
import type { ApiAuth, RequestOrigin } from './authenticator.ts';
import type { ApiEnv } from './caller.ts';

/** The peer of the connection under `@hono/node-server` (its `env` holds the Node request); nothing elsewhere. */
function originOf(env: unknown): RequestOrigin {
  const socket = (env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined)?.incoming?.socket;
  return typeof socket?.remoteAddress === 'string' ? { remoteAddress: socket.remoteAddress } : {};
}

/**
 * Authenticates every request except those to `openPaths` (health, the OpenAPI document), before any
 * routing decision is visible: an unauthenticated caller gets 401 for unknown routes too.
 */
export function authentication(auth: ApiAuth, openPaths: readonly string[]): MiddlewareHandler<ApiEnv> {
  const open = new Set(openPaths);
  return async (c, next) => {
    if (!open.has(c.req.path)) c.set('caller', await auth.authenticate(c.req.header('authorization'), originOf(c.env)));
    await next();
  };
}
