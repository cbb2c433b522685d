import { Hono, type MiddlewareHandler } from 'hono';
import type * as v from 'valibot';
import { requireAccountAccess, type AccountAccessEnv } from '../auth/access.ts';
import { metricsQuerySchema, noQuerySchema, parseQuery, resourceQuerySchema } from './query.ts';
import { cacheHealthView, listAccountResources, podMetricsView, type ResourceDeps } from './service.ts';

/** Refuses a bad query (400) before the account is read: what is wrong with it does not depend on the account. */
function validQuery(schema: v.ObjectSchema<v.ObjectEntries, undefined>): MiddlewareHandler {
  return async (c, next) => {
    parseQuery(c, schema);
    await next();
  };
}

/**
 * What the caching agents report of each account, under `/vendor/accounts/{accountId}`: the cached
 * resources (`/resources`), the health of the cache (`/cache`) and the latest pod metrics (`/metrics`).
 * Each is read like the account itself (docs/api.md#authorization): with permissions, one of its READ or WRITE roles.
 */
export function resourceRoutes(deps: ResourceDeps): Hono<AccountAccessEnv> {
  const read = requireAccountAccess(deps, 'READ');
  return new Hono<AccountAccessEnv>()
    .get('/:accountId/resources', validQuery(resourceQuerySchema), read, async (c) =>
      c.json(await listAccountResources(deps, c.get('account').name, parseQuery(c, resourceQuerySchema))),
    )
    .get('/:accountId/cache', validQuery(noQuerySchema), read, async (c) => c.json(await cacheHealthView(deps, c.get('account'))))
    .get('/:accountId/metrics', validQuery(metricsQuerySchema), read, async (c) =>
      c.json(await podMetricsView(deps, c.get('account').name, parseQuery(c, metricsQuerySchema).namespace)),
    );
}
