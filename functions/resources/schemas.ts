/**
 * What the resource endpoints answer (functions/resources/routes.ts), as the OpenAPI document
 * describes it. service.ts builds these answers without a valibot schema, so they are written out here.
 */
import { named } from '../openapi/describe.ts';

const ageMs = (what: string) => ({ type: ['integer', 'null'], description: `Milliseconds since ${what}; null when there was none.` });

const resource = named('Resource', {
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
});

export const resourcePage = named(
  'ResourcePage',
  {
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: resource.schema }, nextCursor: { type: 'string', description: 'Absent on the last page.' } },
  },
  resource,
);

export const cacheHealth = named('CacheHealth', {
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
          lastError: { type: ['string', 'null'], description: 'The error of a failure going on now; null once every scope of the kind works again.' },
          lastErrorAgeMs: ageMs('the last error (kept after the kind works again)'),
        },
      },
    },
  },
});

export const podMetrics = named('PodMetrics', {
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
});
