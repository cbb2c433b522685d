import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzip } from 'node:zlib';
import type { Clock } from '../../shared/clock.ts';
import { parse as parseYaml } from 'yaml';
import { type DeleteOptions, type KubeApi, type ListQuery, type WriteContext } from './api.ts';
import { authenticate, type AuthOptions, type Authorizer, forbiddenFor, forbiddenPath, mayReadDocument } from './auth.ts';
import { type FaultPlan, type RequestInfo, statusFor } from './faults.ts';
import { isJsonObject, type JsonObject, type JsonValue } from './objects.ts';
import type { PodMetrics } from './pod-metrics.ts';
import type { Registry } from './registry.ts';
import type { ResourceType } from './resource-types.ts';
import { getScale, patchScale, updateScale } from './scale.ts';
import {
  badRequest, internalError, isStatusError, methodNotAllowed, notAcceptable, pathNotFound, requestEntityTooLarge,
  type StatusError, unsupportedMediaType,
} from './status.ts';
import type { WatchHub, WatchQuery } from './watch.ts';

/**
 * The HTTP face of the test API server: resolves kube-apiserver paths, authenticates and
 * authorizes, applies injected faults, and answers with the same status codes, headers and bodies.
 */
export interface RequestRecord extends RequestInfo {
  method: string;
  query: string;
  user: string;
  code: number;
}

export interface HttpDeps {
  registry: Registry;
  api: KubeApi;
  watches: WatchHub;
  faults: FaultPlan;
  podMetrics: PodMetrics;
  auth: AuthOptions | undefined;
  authorize: Authorizer | undefined;
  versionInfo: JsonObject;
  serverAddress: () => string;
  watchListBookmark: boolean;
  record: (r: RequestRecord) => void;
  /** The request's response has ended or its connection closed (for in-flight counts). */
  finished?: (r: RequestRecord) => void;
  /** Open connections held by `hang` faults, released when the server closes. */
  hung: Set<ServerResponse>;
  admin: ((req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>) | undefined;
  /** Injected latency waits on this clock. */
  clock: Clock;
  /** gzip large answers for clients that accept it, as kube-apiserver does. */
  compression: boolean;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

type Resolved =
  | { type: 'document'; body: JsonObject }
  | { type: 'resource'; rt: ResourceType; version: string; namespace: string | undefined; name: string; subresource: string; legacyWatch: boolean }
  | { type: 'podmetrics'; namespace: string | undefined; name: string };

function resolve(registry: Registry, deps: HttpDeps, pathname: string): Resolved {
  const segs = pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
  if (pathname === '/version' || pathname === '/version/') return { type: 'document', body: deps.versionInfo };
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length === 1) return { type: 'document', body: registry.apiVersions(deps.serverAddress()) };
    group = '';
    version = segs[1];
    rest = segs.slice(2);
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { type: 'document', body: registry.apiGroupList() };
    group = segs[1] ?? '';
    if (segs.length === 2) {
      const doc = registry.apiGroup(group);
      if (doc === undefined) throw pathNotFound();
      return { type: 'document', body: doc };
    }
    version = segs[2];
    rest = segs.slice(3);
  } else throw pathNotFound();
  if (version === undefined || !registry.hasGroupVersion(group, version)) throw pathNotFound();
  if (rest.length === 0) {
    const doc = registry.resourceList(group, version);
    if (doc === undefined) throw pathNotFound();
    return { type: 'document', body: doc };
  }
  const legacyWatch = rest[0] === 'watch';
  if (legacyWatch) rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural = '', name = '', subresource = '', ...extra] = rest;
  if (extra.length > 0) throw pathNotFound();
  if (group === 'metrics.k8s.io') {
    if (plural !== 'pods' || subresource !== '') throw pathNotFound();
    return { type: 'podmetrics', namespace, name };
  }
  const rt = registry.lookup(group, version, plural);
  if (rt === undefined) throw pathNotFound();
  if (namespace !== undefined && !rt.namespaced) throw pathNotFound();
  if (namespace === undefined && rt.namespaced && name !== '') throw pathNotFound();
  if (subresource !== '' && !(subresource === 'status' && rt.statusSubresource) && !(subresource === 'scale' && rt.scale !== undefined)) {
    throw pathNotFound();
  }
  return { type: 'resource', rt, version, namespace, name, subresource, legacyWatch };
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

function verbOf(method: string, r: Resolved, q: URLSearchParams): string {
  if (r.type === 'document') return 'discovery';
  if (r.type === 'podmetrics') return r.name === '' ? 'list' : 'get';
  const watch = r.legacyWatch || isTrue(q.get('watch'));
  switch (method) {
    case 'GET':
      if (watch) return 'watch';
      return r.name === '' ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return r.name === '' ? 'deletecollection' : 'delete';
    default:
      return 'other';
  }
}

function infoOf(method: string, r: Resolved, url: URL, path: string): RequestInfo {
  const verb = verbOf(method, r, url.searchParams);
  const query = url.search;
  if (r.type === 'resource') {
    return { verb, group: r.rt.group, resource: r.rt.plural, subresource: r.subresource, namespace: r.namespace ?? '', name: r.name, path, query };
  }
  if (r.type === 'podmetrics') return { verb, group: 'metrics.k8s.io', resource: 'pods', subresource: '', namespace: r.namespace ?? '', name: r.name, path, query };
  return { verb, group: '', resource: '', subresource: '', namespace: '', name: '', path, query };
}

/** Answers whose client accepts gzip, when the server compresses. */
const gzipAccepted = new WeakSet<ServerResponse>();
/** kube-apiserver compresses answers from this size on (its APIResponseCompression threshold). */
const GZIP_THRESHOLD_BYTES = 128 * 1024;

function acceptsGzip(req: IncomingMessage): boolean {
  return (req.headers['accept-encoding'] ?? '').split(',').some((e) => e.split(';')[0]?.trim().toLowerCase() === 'gzip');
}

export function writeJson(res: ServerResponse, code: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const size = Buffer.byteLength(body);
  if (size >= GZIP_THRESHOLD_BYTES && gzipAccepted.has(res)) {
    // Compressed off the event loop, as large lists are what a busy test server spends its time on.
    // Level 1: large lists are sent often, and on loopback speed matters more than size.
    gzip(body, { level: 1 }, (err, zipped) => {
      if (res.destroyed) return;
      if (err !== null) {
        res.destroy(err);
        return;
      }
      res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...headers, 'Content-Encoding': 'gzip', 'Content-Length': zipped.length });
      res.end(zipped);
    });
    return;
  }
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...headers, 'Content-Length': size });
  res.end(body);
}

function writeStatus(res: ServerResponse, e: StatusError): void {
  writeJson(res, e.status.code, JSON.stringify(e.status), { ...e.headers });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw requestEntityTooLarge(MAX_BODY_BYTES);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function decodeObjectBody(req: IncomingMessage, text: string): JsonValue {
  const type = mediaType(req.headers['content-type']);
  if (type === '' || type === 'application/json' || type === '*/*') {
    try {
      return JSON.parse(text) as JsonValue;
    } catch (e) {
      throw badRequest(`Object 'Kind' is missing in '${text.slice(0, 64)}': ${(e as Error).message}`);
    }
  }
  if (type === 'application/yaml') {
    try {
      return parseYaml(text) as JsonValue;
    } catch (e) {
      throw badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
    }
  }
  throw unsupportedMediaType(type, ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
}

function acceptsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  if (accept === undefined || accept === '') return true;
  return accept.split(',').some((a) => {
    const t = mediaType(a);
    return t === 'application/json' || t === '*/*' || t === 'application/*' || t === 'application/json;stream=watch';
  });
}

function userAgentManager(req: IncomingMessage): string {
  const ua = req.headers['user-agent'] ?? '';
  const prefix = ua.split('/')[0]?.trim() ?? '';
  return prefix === '' ? 'unknown' : prefix;
}

function writeContext(req: IncomingMessage, q: URLSearchParams): WriteContext & { force: boolean; fieldManagerGiven: boolean } {
  const fieldManager = q.get('fieldManager');
  const dryRun = q.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All')) throw badRequest(`Invalid dry run value: ${dryRun.join(',')}`);
  return {
    manager: fieldManager ?? userAgentManager(req),
    fieldManagerGiven: fieldManager !== null && fieldManager !== '',
    privileged: false,
    dryRun: dryRun.length > 0,
    force: isTrue(q.get('force')),
  };
}

function listQuery(q: URLSearchParams): ListQuery {
  const out: ListQuery = {};
  const str = (k: string): string | undefined => q.get(k) ?? undefined;
  out.labelSelector = str('labelSelector');
  out.fieldSelector = str('fieldSelector');
  out.continue = str('continue');
  out.resourceVersion = str('resourceVersion');
  out.resourceVersionMatch = str('resourceVersionMatch');
  const limit = q.get('limit');
  if (limit !== null && limit !== '') {
    if (!/^-?\d+$/.test(limit)) throw badRequest(`limit: Invalid value: "${limit}": must be an integer`);
    out.limit = Number(limit);
  }
  return out;
}

function deleteOptions(q: URLSearchParams, body: string): DeleteOptions {
  const opts: DeleteOptions = {};
  if (body.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw badRequest(`error decoding DeleteOptions: ${(e as Error).message}`);
    }
    if (isJsonObject(parsed)) {
      if (typeof parsed.propagationPolicy === 'string') opts.propagationPolicy = parsed.propagationPolicy;
      if (parsed.orphanDependents === true) opts.propagationPolicy ??= 'Orphan';
      if (parsed.orphanDependents === false) opts.propagationPolicy ??= 'Background';
      if (isJsonObject(parsed.preconditions)) {
        const p = parsed.preconditions;
        opts.preconditions = {};
        if (typeof p.uid === 'string') opts.preconditions.uid = p.uid;
        if (typeof p.resourceVersion === 'string') opts.preconditions.resourceVersion = p.resourceVersion;
      }
      if (Array.isArray(parsed.dryRun) && parsed.dryRun.includes('All')) opts.dryRun = true;
    }
  }
  const policy = q.get('propagationPolicy');
  if (policy !== null) opts.propagationPolicy = policy;
  const orphan = q.get('orphanDependents');
  if (orphan !== null && opts.propagationPolicy === undefined) opts.propagationPolicy = isTrue(orphan) ? 'Orphan' : 'Background';
  if (q.getAll('dryRun').includes('All')) opts.dryRun = true;
  return opts;
}

function watchQuery(r: Extract<Resolved, { type: 'resource' }>, q: URLSearchParams): WatchQuery {
  const sendInitial = q.get('sendInitialEvents');
  const timeoutText = q.get('timeoutSeconds');
  const wq: WatchQuery = {
    rt: r.rt,
    version: r.version,
    namespace: r.namespace,
    allowWatchBookmarks: isTrue(q.get('allowWatchBookmarks')),
  };
  const lq = listQuery(q);
  if (lq.labelSelector !== undefined) wq.labelSelector = lq.labelSelector;
  if (lq.fieldSelector !== undefined) wq.fieldSelector = lq.fieldSelector;
  if (r.name !== '') wq.fieldSelector = `metadata.name=${r.name}`;
  if (lq.resourceVersion !== undefined) wq.resourceVersion = lq.resourceVersion;
  if (lq.resourceVersionMatch !== undefined) wq.resourceVersionMatch = lq.resourceVersionMatch;
  if (sendInitial !== null) wq.sendInitialEvents = isTrue(sendInitial);
  if (timeoutText !== null && timeoutText !== '') {
    if (!/^\d+$/.test(timeoutText)) throw badRequest(`timeoutSeconds: Invalid value: "${timeoutText}"`);
    wq.timeoutSeconds = Number(timeoutText);
  }
  return wq;
}

async function serveResource(deps: HttpDeps, req: IncomingMessage, res: ServerResponse, r: Extract<Resolved, { type: 'resource' }>, verb: string, q: URLSearchParams): Promise<void> {
  const { api } = deps;
  const { rt, version, name, subresource } = r;
  const ns = r.namespace ?? '';
  if (subresource === '' && !rt.verbs.includes(verb)) throw methodNotAllowed();
  switch (verb) {
    case 'watch': {
      const wq = watchQuery(r, q);
      const prepared = await deps.watches.prepare(wq);
      deps.watches.open(wq, res, prepared, deps.watchListBookmark);
      return;
    }
    case 'list':
      writeJson(res, 200, await api.list(rt, version, r.namespace, listQuery(q)));
      return;
    case 'get':
      if (subresource === 'scale') writeJson(res, 200, JSON.stringify(getScale(api, rt, ns, name)));
      else writeJson(res, 200, await api.get(rt, version, ns, name, q.get('resourceVersion') ?? undefined));
      return;
    case 'create': {
      if (name !== '') throw methodNotAllowed();
      const body = decodeObjectBody(req, await readBody(req));
      const result = api.create(rt, version, ns, body, writeContext(req, q));
      writeJson(res, 201, result.json);
      return;
    }
    case 'update': {
      const body = decodeObjectBody(req, await readBody(req));
      const ctx = writeContext(req, q);
      if (subresource === 'scale') writeJson(res, 200, JSON.stringify(updateScale(api, rt, ns, name, body, ctx)));
      else writeJson(res, 200, api.update(rt, version, ns, name, body, ctx, subresource === 'status' ? 'status' : undefined).json);
      return;
    }
    case 'patch': {
      const text = await readBody(req);
      const type = mediaType(req.headers['content-type']);
      const ctx = writeContext(req, q);
      if (subresource === 'scale') {
        writeJson(res, 200, JSON.stringify(patchScale(api, rt, ns, name, type, text, ctx)));
        return;
      }
      const result = api.patch(rt, version, ns, name, type, text, ctx, subresource === 'status' ? 'status' : undefined);
      writeJson(res, result.created ? 201 : 200, result.json);
      return;
    }
    case 'delete': {
      const result = api.delete(rt, ns, name, deleteOptions(q, await readBody(req)), writeContext(req, q));
      writeJson(res, result.code, JSON.stringify(result.body));
      return;
    }
    case 'deletecollection':
      writeJson(res, 200, await api.deleteCollection(rt, version, r.namespace, listQuery(q), deleteOptions(q, await readBody(req)), writeContext(req, q)));
      return;
    default:
      throw methodNotAllowed();
  }
}

/** The request listener of the test API server. */
export function createRequestHandler(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((e: unknown) => {
      if (!res.headersSent) writeStatus(res, internalError(e instanceof Error ? e.message : String(e)));
      else res.destroy();
    });
  };
}

async function handle(deps: HttpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  const method = req.method ?? 'GET';
  if (deps.admin !== undefined && path.startsWith('/_test/')) {
    await deps.admin(req, res, url);
    return;
  }
  if (HEALTH_PATHS.has(path)) {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('ok');
    return;
  }
  if (deps.compression && acceptsGzip(req)) gzipAccepted.add(res);
  const record: RequestRecord = { method, verb: 'other', group: '', resource: '', subresource: '', namespace: '', name: '', path, query: url.search, user: '', code: 0 };
  res.on('finish', () => {
    record.code = res.statusCode;
  });
  res.on('close', () => deps.finished?.(record));
  deps.record(record);
  try {
    const user = authenticate(req, deps.auth);
    record.user = user.username;
    if (!acceptsJson(req)) throw notAcceptable();
    const resolved = resolve(deps.registry, deps, path);
    const info = infoOf(method, resolved, url, path);
    Object.assign(record, info);
    if (resolved.type === 'document' && !mayReadDocument(user, path)) throw forbiddenPath(user, method, path);
    if (resolved.type !== 'document' && deps.authorize !== undefined && !deps.authorize(user, info)) throw forbiddenFor(user, info);
    const wait = deps.faults.delayFor(info);
    if (wait > 0) await deps.clock.sleep(wait);
    const action = deps.faults.take(info);
    if (action?.type === 'hang') {
      deps.hung.add(res);
      res.on('close', () => deps.hung.delete(res));
      return;
    }
    if (action?.type === 'close') {
      req.socket.destroy();
      return;
    }
    if (action?.type === 'status') throw statusFor(action);
    if (resolved.type === 'document') {
      if (method !== 'GET') throw methodNotAllowed();
      writeJson(res, 200, JSON.stringify(resolved.body));
      return;
    }
    if (resolved.type === 'podmetrics') {
      if (method !== 'GET') throw methodNotAllowed();
      const body = resolved.name === ''
        ? deps.podMetrics.list(resolved.namespace, url.searchParams.get('labelSelector') ?? undefined)
        : deps.podMetrics.get(resolved.namespace ?? '', resolved.name);
      writeJson(res, 200, body);
      return;
    }
    await serveResource(deps, req, res, resolved, info.verb, url.searchParams);
  } catch (e) {
    if (!isStatusError(e)) throw e;
    writeStatus(res, e);
  }
}
