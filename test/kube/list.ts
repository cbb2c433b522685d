import { decodeContinue, encodeContinue } from './continue-token.ts';
import { apiVersionOf, type ResourceType, servedAs, storageVersion } from './resource-types.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { badRequest, CONTINUE_TOO_OLD, expired, type FieldError, FUTURE_REVISION, invalid, LIST_TOO_OLD, storageError } from './status.ts';
import type { Revision, Store } from './store.ts';

/**
 * LIST: resourceVersion semantics ("" most recent, "0" any, exact or not-older-than), paging with
 * continue tokens pinned to the first page's revision, selectors, and the ListOptions validation of
 * kube-apiserver.
 */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/** A resourceVersion parameter; kube-apiserver answers a malformed one with a bare 500, as Go's ParseUint words it. */
export function parseResourceVersion(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    const why = /^\d+$/.test(text) ? 'value out of range' : 'invalid syntax';
    throw storageError(`resourceVersion: Invalid value: ${JSON.stringify(text)}: strconv.ParseUint: parsing ${JSON.stringify(text)}: ${why}`);
  }
  return n;
}

/** The watch cache of the listed resource, which serves lists at "0" and "not older than" reads without a limit. */
export interface ListCache {
  /** The version the cache stands at, which lists it serves report. */
  rv(): number;
  /** Waits for the cache to reach `rv`; throws 504 ResourceVersionTooLarge when it does not in time. */
  waitNotOlderThan(rv: number): Promise<void>;
}

export async function listResponse(
store: Store, rt: ResourceType, version: string, namespace: string | undefined, q: ListQuery, cache: ListCache,
): Promise<string> {
  validateListOptions(q);
  const labels = parseLabelSelector(q.labelSelector);
  const fields = parseFieldSelector(q.fieldSelector, rt.selectableFields);
  const filter = labels.empty && fields.empty ? undefined : (r: Revision) => labels.matches(r.labels) && fields.matches(r.fields);
  const ns = rt.namespaced ? namespace : undefined;
  const prefix = ns === undefined || ns === '' ? '' : `${ns}/`;
  let atRv = store.resourceVersion;
  /** Set when the watch cache answers: it reports its own version, which may trail the store's (1.20). */
  let cacheRv: number | undefined;
  let limit = q.limit !== undefined && q.limit > 0 ? q.limit : undefined;
  let startKey: string | undefined;
  let offset = 0;
  let total: number | undefined;

  if (q.continue !== undefined && q.continue !== '') {
    if (q.resourceVersion !== undefined && q.resourceVersion !== '' && q.resourceVersion !== '0') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const token = decodeContinue(q.continue);
    if (!token.start.startsWith(prefix)) throw badRequest('invalid continue token: continue key is not valid: key does not match the requested list');
    startKey = token.start;
    if (token.rv === -1) atRv = store.resourceVersion;
    else if (token.rv < store.compactedFor(rt)) {
      throw expired(CONTINUE_TOO_OLD, { continue: encodeContinue({ rv: -1, start: token.start }) });
    } else {
      atRv = token.rv;
      offset = token.offset ?? 0;
      total = token.total;
    }
  } else if (q.resourceVersion !== undefined && q.resourceVersion !== '') {
    const rv = parseResourceVersion(q.resourceVersion);
    const match = q.resourceVersionMatch ?? '';
    if (rv === 0) {
      // "Any" is served from the watch cache, which does not page.
      limit = undefined;
      cacheRv = cache.rv();
    } else if (match === 'Exact' || (match === '' && limit !== undefined)) {
      // An exact read goes to etcd, which neither waits for a revision it has not made nor keeps compacted ones.
      if (rv < store.compactedFor(rt)) throw expired(LIST_TOO_OLD);
      if (rv > store.resourceVersion) throw storageError(FUTURE_REVISION);
      atRv = rv;
    } else {
      await cache.waitNotOlderThan(rv);
      atRv = store.resourceVersion;
      if (limit === undefined) cacheRv = cache.rv();
    }
  }

  const page = store.page(rt, { namespace: ns, atRv, startKey, limit, filter });
  let meta = `"resourceVersion":"${cacheRv ?? atRv}"`;
  if (page.lastKey !== undefined) {
    const next = { rv: atRv, start: `${page.lastKey}\u0000`, offset: offset + page.items.length, total };
    if (filter === undefined) {
      next.total = total ?? offset + page.items.length + store.countFrom(rt, ns, atRv, next.start);
      meta += `,"continue":"${encodeContinue(next)}","remainingItemCount":${next.total - next.offset}`;
    } else meta += `,"continue":"${encodeContinue(next)}"`;
  }
  const items = page.items.map((r) => listItem(rt, version, r.json as string));
  return `{"kind":"${rt.listKind}","apiVersion":"${apiVersionOf(rt.group, version)}","metadata":{${meta}},"items":[${items.join(',')}]}`;
}

/** The ListOptions checks of kube-apiserver for plain lists (watch options are checked in watch.ts). */
function validateListOptions(q: ListQuery): void {
  const match = q.resourceVersionMatch ?? '';
  if (match === '') return;
  const errors: FieldError[] = [];
  const forbid = (detail: string): void => {
    errors.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', detail });
  };
  if (q.resourceVersion === undefined || q.resourceVersion === '') forbid('resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (q.continue !== undefined && q.continue !== '') forbid('resourceVersionMatch is forbidden when continue is provided');
  if (match !== 'Exact' && match !== 'NotOlderThan') {
    errors.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', detail: `"${match}": supported values: "Exact", "NotOlderThan", ""` });
  }
  if (match === 'Exact' && q.resourceVersion === '0') forbid('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  throwListOptionsErrors(errors);
}

/** kube-apiserver reports every ListOptions error at once, in one 422. */
export function throwListOptionsErrors(errors: readonly FieldError[]): void {
  if (errors.length > 0) throw invalid('meta.k8s.io', 'ListOptions', '', errors);
}

/**
 * An item as kube-apiserver writes it in a list: built-in kinds without `kind` and `apiVersion`
 * (only the list says what they are), custom resources with them.
 */
function listItem(rt: ResourceType, version: string, json: string): string {
  if (rt.crdName !== undefined) return servedAs(rt, version, json);
  const typeMeta = `{"kind":"${rt.kind}","apiVersion":"${apiVersionOf(rt.group, storageVersion(rt))}",`;
  return json.startsWith(typeMeta) ? `{${json.slice(typeMeta.length)}` : json;
}
