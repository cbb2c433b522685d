import { Hono } from 'hono';
import { metricsQuerySchema, noQuerySchema, parseQuery, resourceQuerySchema } from './query.ts';
import { cacheHealthView, listAccountResources, podMetricsView, type ResourceDeps } from './service.ts';

/**
 * What the caching agents report of each account, under `/vendor/accounts/{accountId}`: the cached
 * resources (`/resources`), the health of the cache (`/cache`) and the latest pod metrics (`/metrics`).
 */
export function resourceRoutes(deps: ResourceDeps): Hono {
  return new Hono()
    .get('/:accountId/resources', async (c) => c.json(await listAccountResources(deps, c.req.param('accountId'), parseQuery(c, resourceQuerySchema))))
    .get('/:accountId/cache', async (c) => {
      parseQuery(c, noQuerySchema);
      return c.json(await cacheHealthView(deps, c.req.param('accountId')));
    })
    .get('/:accountId/metrics', async (c) => c.json(await podMetricsView(deps, c.req.param('accountId'), parseQuery(c, metricsQuerySchema).namespace)));
}
