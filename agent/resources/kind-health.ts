/**
 * The cache's health per kind, summed over the kind's scopes (namespaces): what the driver stores
 * and the API shows, and what the agent's Prometheus gauges report.
 */
import type { KindHealth, KindHealth__Output } from '../../shared/protocol/messages.ts';
import { kindHealthFits, MAX_HEALTH_KINDS } from '../../shared/protocol/validate.ts';
import type { ScopeState } from './reflector.ts';
import type { ResourceType } from './types.ts';

export interface KindSummary extends Omit<KindHealth__Output, 'lastEventAgeMs' | 'lastErrorAgeMs'> {
  bytes: number;
  lastEventAt?: number;
  lastErrorAt?: number;
}

export function summarize(scopes: readonly { type: ResourceType; state: ScopeState }[]): KindSummary[] {
  const byKind = new Map<string, KindSummary>();
  const failingAt = new Map<string, number>();
  for (const { type, state } of scopes) {
    const key = `${type.group}/${type.kind}`;
    let k = byKind.get(key);
    if (k === undefined) {
      k = { group: type.group, kind: type.kind, scopes: 0, watching: 0, objects: 0, bytes: 0, relists: 0, expired: 0, lastError: '' };
      byKind.set(key, k);
    }
    k.scopes++;
    if (state.watching) k.watching++;
    k.objects += state.objects;
    k.bytes += state.bytes;
    k.relists += state.relists;
    k.expired += state.expired;
    if (state.lastEventAt !== undefined) k.lastEventAt = Math.max(k.lastEventAt ?? 0, state.lastEventAt);
    // The error shown is the newest of the scopes failing now: once every scope works again it is
    // empty, while `lastErrorAt` still says when the kind last failed.
    if (state.lastErrorAt !== undefined) {
      if (k.lastErrorAt === undefined || state.lastErrorAt > k.lastErrorAt) k.lastErrorAt = state.lastErrorAt;
      if (state.lastError !== undefined && (failingAt.get(key) ?? -1) < state.lastErrorAt) {
        failingAt.set(key, state.lastErrorAt);
        k.lastError = state.lastError;
      }
    }
  }
  return [...byKind.values()].sort((a, b) => (a.kind === b.kind ? a.group.localeCompare(b.group) : a.kind.localeCompare(b.kind)));
}

/** The health message: ages instead of times, so the driver's clock need not agree with the agent's. */
/**
 * The report of `kinds` as sent: only kinds the driver takes (`kindHealthFits`: a cluster could name
 * one otherwise, and the driver would refuse the whole batch the report is in, changes and all), and
 * at most `MAX_HEALTH_KINDS` of them.
 */
export function healthMessage(kinds: readonly KindSummary[], now: number): KindHealth[] {
  return kinds.filter(kindHealthFits).slice(0, MAX_HEALTH_KINDS).map((k) => ({
    group: k.group,
    kind: k.kind,
    scopes: k.scopes,
    watching: k.watching,
    objects: k.objects,
    relists: k.relists,
    expired: k.expired,
    lastEventAgeMs: k.lastEventAt === undefined ? -1 : Math.max(0, now - k.lastEventAt),
    lastError: k.lastError,
    lastErrorAgeMs: k.lastErrorAt === undefined ? -1 : Math.max(0, now - k.lastErrorAt),
  }));
}

/** What changes the health enough to report it before the next periodic report (at most every health interval). */
export function healthFingerprint(kinds: readonly KindSummary[]): string {
  return JSON.stringify(kinds.map((k) => [k.group, k.kind, k.scopes, k.watching, k.objects, k.relists, k.expired, k.lastError, k.lastErrorAt]));
}
