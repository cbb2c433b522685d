/**
 * What every action shares: the context it runs in, one cluster request at a time under the
 * operation's deadline, and outcomes that quote the API server's own words.
 */
import type { Clock } from '../../shared/clock.ts';
import { VendorError, isVendorError } from '../../shared/errors.ts';
import type { ObjectOutcomeRecord, ObjectResult } from '../../shared/operations/model.ts';
import { apiVersionPattern, kindPattern, namespacePattern, objectNameProblem } from '../../shared/operations/names.ts';
import { restrictionProblem, type AccountRestrictions } from '../../shared/operations/rules.ts';
import type { ClusterClient, KubeRequest, KubeResponse } from '../clusters/index.ts';
import type { ResourceDiscovery, ResourceInfo } from './resource-discovery.ts';
import type { RequestTrace } from './trace.ts';

/** The field manager of every server-side apply the agent makes. */
export const FIELD_MANAGER = 'vendor-agent';

/** Longest message kept per outcome; the protocol allows 8192. */
const MAX_MESSAGE = 4096;

export interface ExecContext {
  operationId: string;
  cluster: ClusterClient;
  discovery: ResourceDiscovery;
  restrictions: AccountRestrictions;
  clock: Clock;
  /** Aborts when the task is stopped (the account was removed, the agent stops). */
  signal: AbortSignal;
  /** Agent clock (ms) after which no new request starts; Infinity for none. */
  deadline: number;
  /** With the path trace on: told of each request's write and answer. */
  trace?: RequestTrace;
}

export interface ObjectId {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

/** A failed step, as it goes into an outcome. */
export interface Failure {
  code: number;
  reason: string;
  message: string;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
}

/** The API server's status, reason and message when it answered; the transport's message when not. */
export function failureOf(error: unknown): Failure {
  if (isVendorError(error)) {
    const status = error.details['status'];
    const said = error.details['serverMessage'];
    if (typeof status === 'number') {
      return { code: status, reason: String(error.details['reason'] ?? ''), message: clip(typeof said === 'string' ? said : error.message) };
    }
  }
  return { code: 0, reason: '', message: clip(error instanceof Error ? error.message : String(error)) };
}

export class OutOfTime extends VendorError {
  constructor() {
    super('timeout', "not started: the operation's time ran out");
  }
}

/** One cluster request, refused before it starts when the operation is stopped or out of time. */
export async function call(ctx: ExecContext, req: KubeRequest): Promise<KubeResponse> {
  if (ctx.signal.aborted) throw new VendorError('unavailable', 'not started: the operation was stopped');
  if (ctx.clock.now() >= ctx.deadline) throw new OutOfTime();
  return ctx.cluster.request({ ...req, signal: ctx.signal, ...(ctx.trace === undefined ? {} : { trace: ctx.trace }) });
}

export function outcome(index: number, obj: ObjectId, result: ObjectResult, extra: Partial<ObjectOutcomeRecord> = {}): ObjectOutcomeRecord {
  return {
    index,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    ...(obj.namespace === undefined || obj.namespace === '' ? {} : { namespace: obj.namespace }),
    name: obj.name,
    result,
    ...extra,
  };
}

export function failedOutcome(index: number, obj: ObjectId, failure: Failure | string): ObjectOutcomeRecord {
  const f = typeof failure === 'string' ? { code: 0, reason: '', message: failure } : failure;
  return outcome(index, obj, 'failed', { message: f.message, ...(f.code ? { code: f.code } : {}), ...(f.reason ? { reason: f.reason } : {}) });
}

/** resourceVersion and generation of the object an answer carries. */
export function objectVersion(res: KubeResponse): Pick<ObjectOutcomeRecord, 'resourceVersion' | 'generation' | 'code'> {
  try {
    const meta = res.json<{ metadata?: { resourceVersion?: string; generation?: number } }>().metadata;
    return {
      code: res.status,
      ...(meta?.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      ...(typeof meta?.generation === 'number' ? { generation: meta.generation } : {}),
    };
  } catch {
    return { code: res.status };
  }
}

export interface Resolved {
  info: ResourceInfo;
  /** The namespace it is acted on in; undefined for a cluster-scoped kind. */
  namespace: string | undefined;
}

/** Why an object cannot be acted on when its kind is not served (yet: a CRD may be about to serve it). */
export function notServed(obj: ObjectId): string {
  return `the cluster serves no kind ${obj.kind} in ${obj.apiVersion}`;
}

/**
 * Why the identity cannot be acted on before any request is made. The API refuses these shapes, but
 * an operation may reach the agent without its checks, and each part goes into request paths.
 */
function shapeProblem(obj: ObjectId, override: string | undefined): string | undefined {
  if (!apiVersionPattern.test(obj.apiVersion)) return `"${obj.apiVersion.slice(0, 100)}" is not an API version (such as v1 or apps/v1)`;
  if (!kindPattern.test(obj.kind)) return `"${obj.kind.slice(0, 100)}" is not a kind`;
  for (const namespace of [obj.namespace, override]) {
    if (namespace !== undefined && namespace !== '' && !namespacePattern.test(namespace)) return `"${namespace.slice(0, 100)}" is not a namespace name`;
  }
  // An empty name would point the request at the kind's collection instead of one object.
  if (obj.name === '') return 'an object name is required';
  return objectNameProblem(obj.name);
}

/**
 * The resource of an object and the namespace it goes to, checked against the account's
 * restrictions with the scope the cluster reports; a string says why it cannot be acted on.
 */
export async function resolveObject(ctx: ExecContext, obj: ObjectId, override?: string): Promise<Resolved | string> {
  const malformed = shapeProblem(obj, override);
  if (malformed !== undefined) return malformed;
  let info: ResourceInfo | undefined;
  try {
    info = await ctx.discovery.resolve(obj.apiVersion, obj.kind, ctx.signal);
  } catch (error) {
    return `discovery of ${obj.apiVersion} failed: ${failureOf(error).message}`;
  }
  if (info === undefined) return notServed(obj);
  const namespace = info.namespaced ? override || obj.namespace || 'default' : undefined;
  const problem = restrictionProblem(ctx.restrictions, { ...obj, namespace }, info.namespaced ? 'Namespaced' : 'Cluster');
  return problem ?? { info, namespace };
}
