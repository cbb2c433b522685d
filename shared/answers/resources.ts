/**
 * What the resource endpoints answer (functions/resources/routes.ts, docs/api.md): the OpenAPI
 * document, the web console's types and vendorctl's reading of the answers are all taken from these
 * schemas. Only valibot here, so the console can type-check against them (functions/console/client/types.ts).
 */
import * as v from 'valibot';
import { integerSchema as integer, timestampSchema as timestamp } from './fields.ts';

const ageMs = (what: string) => v.pipe(v.nullable(integer), v.description(`Milliseconds since ${what}; null when there was none.`));

/** A cached resource in its compact form. */
export const resourceSchema = v.object({
  apiVersion: v.string(),
  kind: v.string(),
  namespace: v.optional(v.pipe(v.string(), v.description('Absent for cluster-scoped resources.'))),
  name: v.string(),
  resourceVersion: v.pipe(v.string(), v.description('Empty for synthetic resources.')),
  updatedAt: v.pipe(timestamp, v.description('When the control plane stored this state.')),
  object: v.pipe(
    v.record(v.string(), v.unknown()),
    v.description('The compact form: apiVersion, kind, metadata essentials and a summary of spec and status (docs/cache.md).'),
  ),
});

export type ResourceView = v.InferOutput<typeof resourceSchema>;

export const resourcePageSchema = v.object({
  items: v.array(resourceSchema),
  nextCursor: v.optional(v.pipe(v.string(), v.description('Absent on the last page.'))),
});

export type ResourcePage = v.InferOutput<typeof resourcePageSchema>;

/** The health of one kind of the cache, as its caching agent last reported it. */
export const kindHealthSchema = v.object({
  kind: v.string(),
  group: v.string(),
  scopes: v.pipe(integer, v.description('Watches of the kind: one, or one per namespace of `namespaces`.')),
  watching: v.pipe(integer, v.description('Of those, how many had a watch open at the report.')),
  objects: integer,
  lastEventAgeMs: ageMs('the last watch event of the kind'),
  relists: v.pipe(integer, v.description('Full lists made (the first one included).')),
  expired: v.pipe(integer, v.description('Lists caused by 410 Gone.')),
  lastError: v.pipe(v.nullable(v.string()), v.description('The error of a failure going on now; null once every scope of the kind works again.')),
  lastErrorAgeMs: ageMs('the last error (kept after the kind works again)'),
});

export type KindHealthView = v.InferOutput<typeof kindHealthSchema>;

export const cacheHealthSchema = v.object({
  account: v.string(),
  cachingAgentId: v.nullable(v.string()),
  cachingEpoch: v.nullable(integer),
  reportedBy: v.pipe(v.nullable(v.string()), v.description('The agent that sent the report.')),
  reportedAt: v.nullable(timestamp),
  kinds: v.array(kindHealthSchema),
});

export type CacheHealthView = v.InferOutput<typeof cacheHealthSchema>;

const podUsageSchema = v.object({
  namespace: v.string(),
  name: v.string(),
  timestamp: v.pipe(v.string(), v.description('When the metrics server sampled the pod.')),
  window: v.string(),
  containers: v.array(
    v.object({
      name: v.string(),
      cpu: v.pipe(v.string(), v.examples(['12m'])),
      memory: v.pipe(v.string(), v.examples(['34Mi'])),
    }),
  ),
});

export const podMetricsSchema = v.object({
  account: v.string(),
  storedAt: v.nullable(timestamp),
  pods: v.array(podUsageSchema),
});

export type PodMetricsView = v.InferOutput<typeof podMetricsSchema>;
