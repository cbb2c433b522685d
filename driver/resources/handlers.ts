/**
 * The driver's handlers for the resource cache and pod metrics (docs/cache.md): `resourceEvents`
 * into the account's writer, `resumeQuery` answered from the table (and from what this replica holds
 * but has not written yet), `podMetrics` into the table. Each checks the caching epoch rule first.
 *
 * A batch refused by the epoch rule is acknowledged and dropped: it comes from an agent that no
 * longer caches the account (its assignment tells it so), and ending the stream would also cut that
 * agent's other accounts. A refused resume query is answered `accepted: false`, and the agent does
 * not start caching until it is accepted.
 *
 * Progress (where a scope's watch may resume) is recorded only from a batch made under a resume
 * answer this replica gave on the same stream (`resumeQueryId`, agent.proto). Progress says "the
 * table holds every change up to here"; a batch made earlier and sent again on a new stream (the
 * agent resends what was not acknowledged before it asks where the driver stands) may follow
 * changes another replica took and lost when it died. Recording it would make the agent's
 * realignment find nothing missing, and those changes would never arrive. Changes and syncs of such
 * a batch are kept: they are true. Progress is recorded with the API server the query named, and a
 * query is offered only progress of its own API server.
 */
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { ScopeResume } from '../../shared/protocol/messages.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { replacePodMetrics, type NamespaceMetrics, type PodUsageRecord } from '../../shared/table/resources/pod-metrics.ts';
import { scopeProgress, type ScopeProgressRecord } from '../../shared/table/resources/scopes.ts';
import type { AgentSession } from '../agent-session.ts';
import type { AgentMessageHandlers } from '../handlers.ts';
import { CachingGate, type CacheSender } from './caching-gate.ts';
import { AccountCacheWriter, type WriterOptions } from './writer.ts';
import type { DriverMetrics } from '../metrics/metrics.ts';
import { recordResourceWrites } from '../metrics/record.ts';

export interface CacheHandlerDeps {
  table: TableRef;
  clock: Clock;
  log: Logger;
  /** How long a positive answer of the epoch rule is reused (ms). */
  gateTtlMs?: number;
  writer?: Omit<WriterOptions, 'table' | 'clock' | 'log'>;
  metrics?: DriverMetrics | undefined;
}

export interface CacheHandlers {
  readonly handlers: AgentMessageHandlers;
  /** The writer of an account on this replica, if it has one. */
  writer(account: string): AccountCacheWriter | undefined;
  /** Forgets what the epoch rule remembers of an account, so its next message is judged on a fresh read. */
  forget(account: string): void;
  /** Writes what every writer holds, then stops them. */
  close(): Promise<void>;
}

/** What the handlers use of the session a message came on. */
type Sender = Pick<AgentSession, 'id' | 'agentId' | 'zone' | 'identity'>;

const senderOf = (session: Sender): CacheSender => ({ agentId: session.agentId, place: { zone: session.zone, unzoned: session.identity.unzoned } });

/** Metrics of a namespace that no reading covered for this long are dropped: its pods are gone. */
export const POD_METRICS_STALE_MS = 90_000;
/** One warning per account and agent per this interval for refused messages. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

export function cacheHandlers(deps: CacheHandlerDeps): CacheHandlers {
  const { table, clock, log } = deps;
  const gate = new CachingGate(table, clock, deps.gateTtlMs);
  const writers = new Map<string, AccountCacheWriter>();
  const refusals = new Map<string, number>();
  const readingsSeen = new Map<string, { readingId: number; parts: Set<number>; namespaces: Set<string> }>();
  /** Per stream, the resume queries answered (accepted) on it by this replica, and the cluster each named (see above). */
  const answered = new WeakMap<Sender, Map<number, string>>();

  const writerOf = (account: string): AccountCacheWriter => {
    let w = writers.get(account);
    if (w === undefined) writers.set(account, (w = new AccountCacheWriter(account, { table, clock, log, onWritten: (lags) => recordResourceWrites(deps.metrics, lags), onDropped: (write) => deps.metrics?.resourceWritesDropped.inc({ write }), ...deps.writer })));
    return w;
  };

  const admitted = async (kind: string, account: string, epoch: number, session: Sender): Promise<boolean> => {
    const answer = await gate.check(account, senderOf(session), epoch);
    if (answer.ok) return true;
    const key = `${account}\0${session.agentId}`;
    const last = refusals.get(key);
    if (last === undefined || clock.now() - last >= REFUSAL_LOG_INTERVAL_MS) {
      refusals.set(key, clock.now());
      log.warn({ account, agentId: session.agentId, sessionId: session.id, cachingEpoch: epoch }, `${kind} refused: ${answer.reason}`);
    }
    return false;
  };

  /** Progress recorded for `cluster` not longer ago than `maxAgeMs`: the table's, or newer held here. */
  const resumable = async (account: string, maxAgeMs: number, cluster: string): Promise<ScopeResume[]> => {
    const byScope = new Map<string, ScopeProgressRecord>();
    const key = (p: ScopeProgressRecord) => `${p.scope.group}/${p.scope.kind}/${p.scope.namespace}`;
    for (const p of await scopeProgress(table, account)) byScope.set(key(p), p);
    for (const p of writers.get(account)?.pendingProgress() ?? []) {
      const stored = byScope.get(key(p));
      if (stored === undefined || stored.at <= p.at) byScope.set(key(p), p);
    }
    const now = clock.now();
    return [...byScope.values()]
      .filter((p) => p.cluster === cluster && now - p.at <= maxAgeMs)
      .map((p) => ({ scope: { ...p.scope, synthetic: false }, resourceVersion: p.resourceVersion, objects: p.objects, ageMs: Math.max(0, now - p.at) }));
  };

  const handlers: AgentMessageHandlers = {
    resourceEvents: async ({ body }, session) => {
      if (!(await admitted('resource events', body.account, body.cachingEpoch, session))) return;
      deps.metrics?.resourceEventsReceived.inc(body.changes.length);
      const cluster = body.resumeQueryId > 0 ? answered.get(session)?.get(body.resumeQueryId) : undefined;
      await writerOf(body.account).take(cluster !== undefined || body.progress.length === 0 ? body : { ...body, progress: [] }, session.agentId, cluster);
    },
    resumeQuery: async ({ body }, session) => {
      const answer = await gate.check(body.account, senderOf(session), body.cachingEpoch);
      const scopes = answer.ok ? await resumable(body.account, body.maxAgeMs, body.cluster) : [];
      if (answer.ok) {
        let queries = answered.get(session);
        if (queries === undefined) answered.set(session, (queries = new Map()));
        queries.set(body.queryId, body.cluster);
      }
      await session.send({
        kind: 'resumeInfo',
        body: { queryId: body.queryId, account: body.account, accepted: answer.ok, message: answer.ok ? '' : answer.reason, scopes },
      });
    },
    podMetrics: async ({ body }, session) => {
      if (!(await admitted('pod metrics', body.account, body.cachingEpoch, session))) return;
      const now = clock.now();
      const byNamespace = new Map<string, PodUsageRecord[]>(body.namespaces.map((n) => [n, []]));
      for (const p of body.pods) {
        const list = byNamespace.get(p.namespace) ?? [];
        list.push({ namespace: p.namespace, name: p.name, timestamp: p.timestamp, window: p.window, containers: p.containers.map((c) => ({ name: c.name, cpu: c.cpu, memory: c.memory })) });
        byNamespace.set(p.namespace, list);
      }
      const readings: NamespaceMetrics[] = [...byNamespace].map(([namespace, pods]) => ({ namespace, pods, at: now }));
      // The parts of one reading seen on this replica; a reading seen whole replaces the account's metrics.
      let seen = readingsSeen.get(body.account);
      if (seen?.readingId !== body.readingId) readingsSeen.set(body.account, (seen = { readingId: body.readingId, parts: new Set(), namespaces: new Set() }));
      seen.parts.add(body.part);
      for (const n of byNamespace.keys()) seen.namespaces.add(n);
      const whole = body.last && seen.parts.size === body.part;
      await replacePodMetrics(table, body.account, readings, {
        ...(whole ? { only: seen.namespaces } : {}),
        ...(body.last ? { staleBefore: now - POD_METRICS_STALE_MS } : {}),
      });
    },
  };

  return {
    handlers,
    writer: (account) => writers.get(account),
    forget: (account) => gate.forget(account),
    close: async () => {
      await Promise.all([...writers.values()].map((w) => w.close()));
    },
  };
}
