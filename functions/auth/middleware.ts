import type { MiddlewareHandler } from 'hono';
import type { ApiAuth } from './authenticator.ts';
import type { ApiEnv } from './caller.ts';

/**
 * Authenticates every request except those to `openPaths` (health, the OpenAPI document), before any
 * routing decision is visible: an unauthenticated caller gets 401 for unknown routes too.
 */
export function authentication(auth: ApiAuth, openPaths: readonly string[]): MiddlewareHandler<ApiEnv> {
  const open = new Set(openPaths);
  return async (c, next) => {
    if (!open.has(c.req.path)) c.set('caller', await auth.authenticate(c.req.header('authorization')));
    await next();
  };
}
