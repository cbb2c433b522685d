import { Hono, type MiddlewareHandler } from 'hono';
import type * as v from 'valibot';
import { VendorError } from '../../shared/errors.ts';
import { cacheCleanupPending } from '../../shared/table/resources/cleanup.ts';
import { requireAccountAccess, type AccountAccessEnv } from '../auth/access.ts';
import { accountParameter, authenticatedRoute, json, jsonSchemaOf, named, problem, queryParameters } from '../openapi/describe.ts';
import { DEFAULT_RESOURCE_LIMIT, MAX_RESOURCE_LIMIT, metricsQuerySchema, noQuerySchema, parseQuery, resourceQuerySchema } from './query.ts';
import { cacheHealthSchema, podMetricsSchema, resourcePageSchema, resourceSchema } from '../../shared/answers/resources.ts';
import { cacheHealthView, listAccountResources, podMetricsView, type ResourceDeps } from './service.ts';

/** Refuses a bad query (400) before the account is read: what is wrong with it does not depend on the account. */
function validQuery(schema: v.ObjectSchema<v.ObjectEntries, undefined>): MiddlewareHandler {
  return async (c, next) => {
    parseQuery(c, schema);
    await next();
  };
}

/**
 * After the account's cache lost its last writer (DELETE, or the last agent announcing it withdrew)
 * and while the cleanup deletes it, the cache is not served: the endpoints answer as for an account
 * that does not exist (docs/api.md, DELETE), the same 404 as `requireAccountAccess`.
 */
function cacheNotGoing(deps: ResourceDeps): MiddlewareHandler<AccountAccessEnv> {
  return async (c, next) => {
    const record = c.get('account');
    if (await cacheCleanupPending(deps.table, record)) throw new VendorError('not_found', `no account named "${record.name}"`);
    await next();
  };
}

const resource = named('Resource', jsonSchemaOf(resourceSchema, 'output'));
const resourcePage = named('ResourcePage', jsonSchemaOf(resourcePageSchema, 'output', { Resource: resourceSchema }), resource);
const cacheHealth = named('CacheHealth', jsonSchemaOf(cacheHealthSchema, 'output'));
const podMetrics = named('PodMetrics', jsonSchemaOf(podMetricsSchema, 'output'));

const notFound = problem('No account with that name, or one whose cached data is being deleted (after DELETE).');
const forbidden = problem('The account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role).');

const listResourcesDescription = authenticatedRoute({
  operationId: 'listResources',
  summary: "The account's cached resources in their compact form, sorted by kind, group, namespace and name.",
  description:
    'Cursor paging: follow `nextCursor` until it is absent. A page may hold fewer than `limit` items while more follow (filters on namespace without a group, or on name, are applied after reading). Synthetic resources (namespaces and CRDs of accounts restricted by `namespaces` or `onlyNamespacedResources`) carry `object.synthetic: true`.',
  parameters: [
    accountParameter,
    ...queryParameters(resourceQuerySchema, {
      kind: { description: 'Singular kind name, any case (`deployment`), or kind and group (`Deployment.apps`).' },
      // Read as text and checked as a number: described as the number it stands for.
      limit: { schema: { type: 'integer', minimum: 1, maximum: MAX_RESOURCE_LIMIT, default: DEFAULT_RESOURCE_LIMIT } },
      cursor: { description: 'The `nextCursor` of the previous page, with the same filters.' },
    }),
  ],
  responses: {
    '200': { description: 'One page.', content: json(resourcePage) },
    '400': problem('A bad or unknown query parameter, or a cursor this API did not give for these filters.'),
    '404': notFound,
    '403': forbidden,
  },
});

const getCacheHealthDescription = authenticatedRoute({
  operationId: 'getCacheHealth',
  summary: "Health of the account's resource cache per kind, as its caching agent last reported it.",
  parameters: [accountParameter, ...queryParameters(noQuerySchema)],
  responses: {
    '200': { description: 'The cache health; `kinds` is empty before the first report.', content: json(cacheHealth) },
    '400': problem('A query parameter was given.'),
    '404': notFound,
    '403': forbidden,
  },
});

const getPodMetricsDescription = authenticatedRoute({
  operationId: 'getPodMetrics',
  summary: 'The latest pod metrics of the account (`metrics: true`), refreshed every 20 seconds by its caching agent.',
  parameters: [accountParameter, ...queryParameters(metricsQuerySchema)],
  responses: {
    '200': { description: 'Pods sorted by namespace and name.', content: json(podMetrics) },
    '400': problem('A bad or unknown query parameter.'),
    '404': notFound,
    '403': forbidden,
  },
});

/**
 * What the caching agents report of each account, under `/vendor/accounts/{accountId}`: the cached
 * resources (`/resources`), the health of the cache (`/cache`) and the latest pod metrics (`/metrics`).
 * Each is read like the account itself (docs/api.md#authorization): with permissions, one of its READ or WRITE roles.
 */
export function resourceRoutes(deps: ResourceDeps): Hono<AccountAccessEnv> {
  const read = requireAccountAccess(deps, 'READ');
  const served = cacheNotGoing(deps);
  return new Hono<AccountAccessEnv>()
    .get('/:accountId/resources', listResourcesDescription, validQuery(resourceQuerySchema), read, served, async (c) =>
      c.json(await listAccountResources(deps, c.get('account').name, parseQuery(c, resourceQuerySchema))),
    )
    .get('/:accountId/cache', getCacheHealthDescription, validQuery(noQuerySchema), read, served, async (c) => c.json(await cacheHealthView(deps, c.get('account'))))
    .get('/:accountId/metrics', getPodMetricsDescription, validQuery(metricsQuerySchema), read, served, async (c) =>
      c.json(await podMetricsView(deps, c.get('account').name, parseQuery(c, metricsQuerySchema).namespace)),
    );
}
