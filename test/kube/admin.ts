import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import type { PodMetrics } from './pod-metrics.ts';
import type { MetricsGroupState } from './registry.ts';
import { churn, seedCluster } from './seed.ts';
import { isStatusError } from './status.ts';
import type { TestFaults } from './test-faults.ts';
import type { TestStore } from './test-store.ts';
import type { WatchHub } from './watch.ts';

/**
 * `/_test/...`: the knobs of a test API server running in another process (see main.ts), as JSON
 * over HTTP. Served only when the server is started with `admin: true`; never part of the
 * Kubernetes API surface.
 */
export interface AdminDeps {
  store: TestStore;
  faults: TestFaults;
  podMetrics: PodMetrics;
  metricsState: MetricsGroupState;
  watches: WatchHub;
}

const Match = v.optional(v.object({
  verb: v.optional(v.union([v.string(), v.array(v.string())])),
  group: v.optional(v.string()),
  resource: v.optional(v.string()),
  subresource: v.optional(v.string()),
  namespace: v.optional(v.string()),
  name: v.optional(v.string()),
  path: v.optional(v.string()),
}), {});
const Filter = v.optional(v.object({ group: v.optional(v.string()), resource: v.optional(v.string()), namespace: v.optional(v.string()) }), {});
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

const FaultBody = v.object({
  match: Match,
  times: v.optional(v.union([Count, v.literal('always')]), 1),
  action: v.variant('type', [
    v.object({ type: v.literal('status'), code: v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599)), retryAfterSeconds: v.optional(Count), message: v.optional(v.string()) }),
    v.object({ type: v.literal('hang') }),
    v.object({ type: v.literal('close') }),
  ]),
});
const LatencyBody = v.object({ ms: Count, match: Match });
const DropBody = v.object({ filter: Filter, mode: v.optional(v.picklist(['end', 'destroy']), 'end') });
const SilenceBody = v.object({ filter: Filter });
const CompactBody = v.object({ resourceVersion: v.optional(Count), only: v.optional(v.object({ apiVersion: v.string(), kind: v.string() })) });
const MetricsBody = v.object({
  namespace: v.string(),
  name: v.string(),
  containers: v.array(v.object({ name: v.string(), usage: v.object({ cpu: v.string(), memory: v.string() }) })),
  labels: v.optional(v.record(v.string(), v.string())),
});
const MetricsApiBody = v.object({ enabled: v.boolean() });
const SeedBody = v.object({ objects: Count, namespaces: v.optional(v.pipe(Count, v.minValue(1))), namespacePrefix: v.optional(v.string()) });
const ChurnBody = v.object({
  count: Count,
  kinds: v.optional(v.array(v.object({ apiVersion: v.string(), kind: v.string() }))),
  batch: v.optional(v.pipe(Count, v.minValue(1))),
  paced: v.optional(v.boolean(), false),
});
/** A paced churn waits while a watcher has more than this unread, well below the slow-watcher limit. */
const PACED_BACKLOG_BYTES = 16 * 1024 * 1024;
const ObjectBody = v.looseObject({ apiVersion: v.string(), kind: v.string(), metadata: v.looseObject({ name: v.string() }) });

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function body<T extends v.GenericSchema>(req: IncomingMessage, schema: T): Promise<v.InferOutput<T>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  let parsed: unknown = {};
  if (text !== '') parsed = JSON.parse(text);
  return v.parse(schema, parsed);
}

type Route = (deps: AdminDeps, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

const ROUTES: Record<string, Route> = {
  'GET /_test/stats': async (d, _req, res) => {
    send(res, 200, { resourceVersion: d.store.resourceVersion, compactedResourceVersion: d.store.compactedResourceVersion, objects: d.store.stats(), watches: d.watches.size });
  },
  'POST /_test/faults': async (d, req, res) => {
    const b = await body(req, FaultBody);
    send(res, 200, { id: d.faults.inject({ match: b.match, times: b.times === 'always' ? Infinity : b.times, action: b.action }) });
  },
  'DELETE /_test/faults': async (d, _req, res) => {
    d.faults.clear();
    send(res, 200, {});
  },
  'POST /_test/latency': async (d, req, res) => {
    const b = await body(req, LatencyBody);
    d.faults.latency(b.ms, b.match);
    send(res, 200, {});
  },
  'POST /_test/watches/drop': async (d, req, res) => {
    const b = await body(req, DropBody);
    send(res, 200, { dropped: d.faults.dropWatches(b.filter, b.mode) });
  },
  'POST /_test/watches/silence': async (d, req, res) => {
    const b = await body(req, SilenceBody);
    send(res, 200, { silenced: d.faults.silenceWatches(b.filter) });
  },
  'POST /_test/bookmarks': async (d, _req, res) => {
    d.faults.sendBookmarks();
    send(res, 200, {});
  },
  'POST /_test/sockets/close': async (d, _req, res) => {
    // Answer first: this request's own connection is one of those cut.
    res.on('finish', () => d.faults.closeSockets());
    send(res, 200, {});
  },
  'POST /_test/compact': async (d, req, res) => {
    const b = await body(req, CompactBody);
    d.faults.compact(b.resourceVersion, b.only);
    send(res, 200, { compactedResourceVersion: d.store.compactedResourceVersion });
  },
  'POST /_test/history/expire': async (d, _req, res) => {
    send(res, 200, { compactedResourceVersion: d.faults.expireHistory() });
  },
  'PUT /_test/metrics/pods': async (d, req, res) => {
    const b = await body(req, MetricsBody);
    d.podMetrics.set(b.namespace, b.name, b.containers, b.labels ?? {});
    send(res, 200, {});
  },
  'DELETE /_test/metrics/pods': async (d, _req, res) => {
    d.podMetrics.clear();
    send(res, 200, {});
  },
  'POST /_test/metrics/api': async (d, req, res) => {
    d.metricsState.enabled = (await body(req, MetricsApiBody)).enabled;
    send(res, 200, {});
  },
  'POST /_test/seed': async (d, req, res) => {
    send(res, 200, await seedCluster(d.store, await body(req, SeedBody)));
  },
  'POST /_test/churn': async (d, req, res) => {
    const { paced, ...options } = await body(req, ChurnBody);
    send(res, 200, await churn(d.store, paced ? { ...options, behind: () => d.watches.maxBacklog() > PACED_BACKLOG_BYTES } : options));
  },
  'PUT /_test/objects': async (d, req, res) => {
    const b = await body(req, ObjectBody);
    send(res, 200, d.store.upsert(b));
  },
};

export async function handleAdmin(deps: AdminDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const route = ROUTES[`${req.method ?? 'GET'} ${url.pathname}`];
  if (route === undefined) {
    send(res, 404, { error: `no admin route ${req.method ?? ''} ${url.pathname}` });
    return;
  }
  try {
    await route(deps, req, res, url);
  } catch (e) {
    if (v.isValiError(e)) send(res, 400, { error: 'invalid body', issues: e.issues.map((i) => ({ path: v.getDotPath(i) ?? '', message: i.message })) });
    else if (e instanceof SyntaxError) send(res, 400, { error: `invalid JSON: ${e.message}` });
    else if (isStatusError(e)) send(res, e.code, e.status);
    else throw e;
  }
}
