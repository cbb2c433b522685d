/** The OpenAPI entries of the resource endpoints (functions/resources/routes.ts). */
import { accountNameParam, authResponses, json, problem, ref } from '../openapi-parts.ts';
import { DEFAULT_RESOURCE_LIMIT, MAX_RESOURCE_LIMIT } from './query.ts';

const ageMs = (what: string) => ({ type: ['integer', 'null'], description: `Milliseconds since ${what}; null when there was none.` });

export function resourcePaths(): Record<string, unknown> {
  const account = accountNameParam('accountId', 'The account name.');
  const notFound = problem('No account with that name.');
  const readOnly = {
    ...authResponses,
    '403': problem('The account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role).'),
  };
  return {
    '/vendor/accounts/{accountId}/resources': {
      get: {
        operationId: 'listResources',
        summary: 'The account\'s cached resources in their compact form, sorted by kind, group, namespace and name.',
        description:
          'Cursor paging: follow `nextCursor` until it is absent. A page may hold fewer than `limit` items while more follow (filters on namespace without a group, or on name, are applied after reading). Synthetic resources (namespaces and CRDs of accounts restricted by `namespaces` or `onlyNamespacedResources`) carry `object.synthetic: true`.',
        parameters: [
          account,
          { name: 'kind', in: 'query', description: 'Singular kind name, any case (`deployment`), or kind and group (`Deployment.apps`).', schema: { type: 'string' } },
          { name: 'namespace', in: 'query', schema: { type: 'string' } },
          { name: 'name', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_RESOURCE_LIMIT, default: DEFAULT_RESOURCE_LIMIT } },
          { name: 'cursor', in: 'query', description: 'The `nextCursor` of the previous page, with the same filters.', schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'One page.', content: json(ref('ResourcePage')) },
          '400': problem('A bad or unknown query parameter, or a cursor this API did not give for these filters.'),
          '404': notFound,
          ...readOnly,
        },
      },
    },
    '/vendor/accounts/{accountId}/cache': {
      get: {
        operationId: 'getCacheHealth',
        summary: 'Health of the account\'s resource cache per kind, as its caching agent last reported it.',
        parameters: [account],
        responses: { '200': { description: 'The cache health; `kinds` is empty before the first report.', content: json(ref('CacheHealth')) }, '400': problem('A query parameter was given.'), '404': notFound, ...readOnly },
      },
    },
    '/vendor/accounts/{accountId}/metrics': {
      get: {
        operationId: 'getPodMetrics',
        summary: 'The latest pod metrics of the account (`metrics: true`), refreshed every 20 seconds by its caching agent.',
        parameters: [account, { name: 'namespace', in: 'query', schema: { type: 'string' } }],
        responses: { '200': { description: 'Pods sorted by namespace and name.', content: json(ref('PodMetrics')) }, '400': problem('A bad or unknown query parameter.'), '404': notFound, ...readOnly },
      },
    },
  };
}

export function resourceSchemas(): Record<string, unknown> {
  return {
    Resource: {
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'resourceVersion', 'updatedAt', 'object'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        namespace: { type: 'string', description: 'Absent for cluster-scoped resources.' },
        name: { type: 'string' },
        resourceVersion: { type: 'string', description: 'Empty for synthetic resources.' },
        updatedAt: { type: 'string', format: 'date-time', description: 'When the control plane stored this state.' },
        object: { type: 'object', description: 'The compact form: apiVersion, kind, metadata essentials and a summary of spec and status (docs/cache.md).' },
      },
    },
    ResourcePage: {
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', items: ref('Resource') }, nextCursor: { type: 'string', description: 'Absent on the last page.' } },
    },
    CacheHealth: {
      type: 'object',
      required: ['account', 'cachingAgentId', 'cachingEpoch', 'reportedBy', 'reportedAt', 'kinds'],
      properties: {
        account: { type: 'string' },
        cachingAgentId: { type: ['string', 'null'] },
        cachingEpoch: { type: ['integer', 'null'] },
        reportedBy: { type: ['string', 'null'], description: 'The agent that sent the report.' },
        reportedAt: { type: ['string', 'null'], format: 'date-time' },
        kinds: {
          type: 'array',
          items: {
            type: 'object',
            required: ['kind', 'group', 'scopes', 'watching', 'objects', 'lastEventAgeMs', 'relists', 'expired', 'lastError', 'lastErrorAgeMs'],
            properties: {
              kind: { type: 'string' },
              group: { type: 'string' },
              scopes: { type: 'integer', description: 'Watches of the kind: one, or one per namespace of `namespaces`.' },
              watching: { type: 'integer', description: 'Of those, how many had a watch open at the report.' },
              objects: { type: 'integer' },
              lastEventAgeMs: ageMs('the last watch event of the kind'),
              relists: { type: 'integer', description: 'Full lists made (the first one included).' },
              expired: { type: 'integer', description: 'Lists caused by 410 Gone.' },
              lastError: { type: ['string', 'null'] },
              lastErrorAgeMs: ageMs('the last error'),
            },
          },
        },
      },
    },
    PodMetrics: {
      type: 'object',
      required: ['account', 'storedAt', 'pods'],
      properties: {
        account: { type: 'string' },
        storedAt: { type: ['string', 'null'], format: 'date-time' },
        pods: {
          type: 'array',
          items: {
            type: 'object',
            required: ['namespace', 'name', 'timestamp', 'window', 'containers'],
            properties: {
              namespace: { type: 'string' },
              name: { type: 'string' },
              timestamp: { type: 'string', description: 'When the metrics server sampled the pod.' },
              window: { type: 'string' },
              containers: {
                type: 'array',
                items: { type: 'object', required: ['name', 'cpu', 'memory'], properties: { name: { type: 'string' }, cpu: { type: 'string', examples: ['12m'] }, memory: { type: 'string', examples: ['34Mi'] } } },
              },
            },
          },
        },
      },
    },
  };
}
