/**
 * Whether a caching agent's report says something the stored one does not (docs/table.md#costs). The
 * agent reports its cache's health every 10 s, and its cluster's status with it, each with ages the
 * driver turns into times. Stored every time, an idle account would cost a write unit per KB of health
 * (about 106 bytes a kind: 7 units for a cluster of 60 kinds) and the account item's size for the
 * status, every 10 s, forever, though nothing changed. A report is stored when it differs beyond its
 * times, and otherwise at most every `REPORT_REFRESH_MS`, so what the API serves is at most that old.
 */
import type { ClusterStatusRecord } from '../../shared/accounts/model.ts';
import type { CacheHealthRecord, KindHealthRecord } from '../../shared/table/resources/health.ts';

/** How old a stored report may get while the reports that arrive say nothing new. */
export const REPORT_REFRESH_MS = 60_000;

/**
 * Two times the driver worked out from ages in two reports are the same when this close: each is the
 * report's arrival less an age measured at the agent, which moves with the stream's delays.
 */
const SAME_TIME_MS = 2_000;

const sameTime = (a: number | undefined, b: number | undefined): boolean =>
  a === undefined || b === undefined ? a === b : Math.abs(a - b) <= SAME_TIME_MS;

/**
 * The same counts, errors and error times, kind by kind in the same order. When each kind last had
 * an event is left out (a busy kind has one in every report): while that is all that moves, the
 * stored one is refreshed every `REPORT_REFRESH_MS`; a kind's first event counts.
 */
function sameKind(a: KindHealthRecord, b: KindHealthRecord): boolean {
  return (
    a.group === b.group &&
    a.kind === b.kind &&
    a.scopes === b.scopes &&
    a.watching === b.watching &&
    a.objects === b.objects &&
    a.relists === b.relists &&
    a.expired === b.expired &&
    a.lastError === b.lastError &&
    (a.lastEventAt === undefined) === (b.lastEventAt === undefined) &&
    sameTime(a.lastErrorAt, b.lastErrorAt)
  );
}

export function sameHealth(stored: CacheHealthRecord, next: CacheHealthRecord): boolean {
  if (stored.agentId !== next.agentId || stored.cachingEpoch !== next.cachingEpoch || stored.kinds.length !== next.kinds.length) return false;
  return stored.kinds.every((k, i) => sameKind(k, next.kinds[i]!));
}

export function sameClusterStatus(stored: ClusterStatusRecord, next: ClusterStatusRecord): boolean {
  const a = stored.lastOutage;
  const b = next.lastOutage;
  const sameOutage = a === undefined || b === undefined ? a === b : a.reason === b.reason && sameTime(a.from, b.from) && sameTime(a.until, b.until);
  return (
    stored.agentId === next.agentId &&
    stored.reachable === next.reachable &&
    stored.reason === next.reason &&
    stored.error === next.error &&
    sameTime(stored.since, next.since) &&
    sameOutage
  );
}

/** Whether `next`, taken at `next.at`, is to be stored over `stored` (the last one stored by this writer). */
export function worthStoring<T extends { at: number }>(stored: T | undefined, next: T, same: (a: T, b: T) => boolean, refreshMs: number): boolean {
  return stored === undefined || next.at - stored.at >= refreshMs || !same(stored, next);
}
