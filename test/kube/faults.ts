import { internalError, serviceUnavailable, StatusError, timeout, tooManyRequests, failure } from './status.ts';

/**
 * Injected failures for requests: answer with a Status (429 with Retry-After, 500, 503, 504), hang
 * without answering, or cut the connection, for the next N requests that match; and added latency.
 * Matching is on what the request addresses, so a test can fail "the next 2 lists of pods".
 */
export interface RequestInfo {
  /** get, list, watch, create, update, patch, delete, deletecollection; `discovery` and `other` for the rest. */
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
  /** The query string as sent (`?limit=1&...`), empty without one. */
  query?: string;
}

export interface FaultMatch {
  verb?: string | string[];
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Substring of the request path. */
  path?: string;
  /** Query parameters the request carries with exactly these values (`{ limit: '1' }`). */
  query?: Readonly<Record<string, string>>;
}

export type FaultAction =
  | { type: 'status'; code: number; retryAfterSeconds?: number; message?: string }
  | { type: 'hang' }
  | { type: 'close' };

export interface FaultRule {
  match?: FaultMatch;
  /** How many matching requests it applies to; 1 by default, `Infinity` for all until cleared. */
  times?: number;
  action: FaultAction;
}

interface ActiveRule {
  id: number;
  match: FaultMatch;
  remaining: number;
  action: FaultAction;
}

export function matches(m: FaultMatch, r: RequestInfo): boolean {
  const verbs = m.verb === undefined ? undefined : Array.isArray(m.verb) ? m.verb : [m.verb];
  return (verbs === undefined || verbs.includes(r.verb))
    && (m.group === undefined || m.group === r.group)
    && (m.resource === undefined || m.resource === r.resource)
    && (m.subresource === undefined || m.subresource === r.subresource)
    && (m.namespace === undefined || m.namespace === r.namespace)
    && (m.name === undefined || m.name === r.name)
    && (m.path === undefined || r.path.includes(m.path))
    && (m.query === undefined || queryMatches(m.query, r.query ?? ''));
}

function queryMatches(wanted: Readonly<Record<string, string>>, query: string): boolean {
  const params = new URLSearchParams(query);
  return Object.entries(wanted).every(([k, v]) => params.get(k) === v);
}

/** The Status error a status action answers with, in kube-apiserver's words for that code. */
export function statusFor(action: { code: number; retryAfterSeconds?: number; message?: string }): StatusError {
  switch (action.code) {
    case 429:
      return tooManyRequests(action.retryAfterSeconds ?? 1, action.message);
    case 500:
      return internalError(action.message ?? 'injected fault');
    case 503:
      return serviceUnavailable(action.message ?? 'service unavailable');
    case 504:
      return timeout(action.message, action.retryAfterSeconds);
    default:
      return new StatusError(failure(action.code, 'InternalError', action.message ?? `injected status ${action.code}`));
  }
}

export class FaultPlan {
  #rules: ActiveRule[] = [];
  #latency: { ms: number; match: FaultMatch }[] = [];
  #nextId = 1;

  /** Adds a rule; returns its id for `remove`. */
  inject(rule: FaultRule): number {
    const id = this.#nextId++;
    this.#rules.push({ id, match: rule.match ?? {}, remaining: rule.times ?? 1, action: rule.action });
    return id;
  }

  remove(id: number): void {
    this.#rules = this.#rules.filter((r) => r.id !== id);
  }

  /** Adds `ms` of delay to every matching request until cleared. */
  latency(ms: number, match: FaultMatch = {}): void {
    this.#latency.push({ ms, match });
  }

  clear(): void {
    this.#rules = [];
    this.#latency = [];
  }

  /** The action for this request, using up one of the rule's times. */
  take(r: RequestInfo): FaultAction | undefined {
    const rule = this.#rules.find((x) => x.remaining > 0 && matches(x.match, r));
    if (rule === undefined) return undefined;
    rule.remaining--;
    if (rule.remaining <= 0) this.remove(rule.id);
    return rule.action;
  }

  delayFor(r: RequestInfo): number {
    let ms = 0;
    for (const l of this.#latency) if (matches(l.match, r)) ms += l.ms;
    return ms;
  }

  /** Rules still armed, for the admin endpoint. */
  pending(): { id: number; match: FaultMatch; remaining: number; action: FaultAction }[] {
    return this.#rules.map((r) => ({ ...r }));
  }
}
