/**
 * What the resource endpoints read: an account's cached objects a page at a time, its cache health,
 * and its latest pod metrics. The routes hand over an account the caller may read (its existence and
 * the caller's access are checked by `requireAccountAccess`).
 */
import type { AccountRecord } from '../../shared/accounts/model.ts';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { jsonTextTooDeep } from '../../shared/json-depth.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import type { IgnoredPermissionsLog } from '../auth/access.ts';
import { podMetrics } from '../../shared/table/resources/pod-metrics.ts';
import { getCacheHealth } from '../../shared/table/resources/health.ts';
import { listResources, type ResourceFilter } from '../../shared/table/resources/objects.ts';
import type { CacheHealthView, PodMetricsView, ResourcePage, ResourceView } from '../../shared/answers/resources.ts';

export interface ResourceDeps {
  table: TableRef;
  clock: Clock;
  permissionsLog?: IgnoredPermissionsLog;
}

/**
 * Deeper than any compact form the agent makes (docs/cache.md), and still far from what answering
 * with `JSON.stringify`, which recurses, can take.
 */
export const MAX_STORED_OBJECT_DEPTH = 256;

/**
 * A stored object as the API answers it. The text came from an agent, which may be rogue: one that is
 * not a JSON object, or nests too deeply to be answered, is answered as `{ unreadable: <why> }`
 * rather than failing the whole page.
 */
function storedObject(text: string): { apiVersion?: unknown; kind?: unknown } & Record<string, unknown> {
  if (jsonTextTooDeep(text, MAX_STORED_OBJECT_DEPTH)) return { unreadable: `nested deeper than ${MAX_STORED_OBJECT_DEPTH} levels` };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered as unreadable below
  }
  return { unreadable: 'not a JSON object' };
}

/** The cursor is the sort key of the last item given, so a page starts right after it. */
function encodeCursor(sk: string): string {
  return Buffer.from(sk, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, prefix: string): string {
  const sk = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!sk.includes('#') || !sk.startsWith(prefix)) {
    throw new VendorError('invalid_input', 'cursor: is not a cursor this API gave for these filters', { issues: [{ path: 'cursor', message: 'is not a cursor this API gave for these filters' }] });
  }
  return sk;
}

export function kindFilter(kind: string | undefined): Pick<ResourceFilter, 'kind' | 'group'> {
  if (kind === undefined) return {};
  const dot = kind.indexOf('.');
  return dot < 0 ? { kind: kind.toLowerCase() } : { kind: kind.slice(0, dot).toLowerCase(), group: kind.slice(dot + 1) };
}

export async function listAccountResources(
  deps: ResourceDeps,
  account: string,
  query: { kind?: string; namespace?: string; name?: string; limit: number; cursor?: string },
): Promise<ResourcePage> {
  const filter: ResourceFilter = {
    ...kindFilter(query.kind),
    ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
    ...(query.name === undefined ? {} : { name: query.name }),
  };
  const prefix = filter.kind === undefined ? '' : `${filter.kind}#${filter.group === undefined ? '' : `${filter.group}#`}`;
  const start = query.cursor === undefined ? undefined : decodeCursor(query.cursor, prefix);
  const page = await listResources(deps.table, account, filter, query.limit, start);
  const items = page.items.map((r): ResourceView => {
    const object = storedObject(r.object);
    return {
      apiVersion: typeof object.apiVersion === 'string' ? object.apiVersion : '',
      kind: typeof object.kind === 'string' ? object.kind : '',
      ...(r.namespace === '' ? {} : { namespace: r.namespace }),
      name: r.name,
      resourceVersion: r.resourceVersion,
      updatedAt: new Date(r.updatedAt).toISOString(),
      object,
    };
  });
  return page.next === undefined ? { items } : { items, nextCursor: encodeCursor(page.next) };
}

const age = (now: number, at: number | undefined): number | null => (at === undefined ? null : Math.max(0, now - at));

export async function cacheHealthView(deps: ResourceDeps, record: Pick<AccountRecord, 'name' | 'cachingAgentId' | 'cachingEpoch'>): Promise<CacheHealthView> {
  const account = record.name;
  const health = await getCacheHealth(deps.table, account);
  const now = deps.clock.now();
  return {
    account,
    cachingAgentId: record.cachingAgentId ?? null,
    cachingEpoch: record.cachingEpoch ?? null,
    reportedBy: health?.agentId ?? null,
    reportedAt: health === undefined ? null : new Date(health.at).toISOString(),
    kinds: (health?.kinds ?? []).map((k) => ({
      kind: k.kind,
      group: k.group,
      scopes: k.scopes,
      watching: k.watching,
      objects: k.objects,
      lastEventAgeMs: age(now, k.lastEventAt),
      relists: k.relists,
      expired: k.expired,
      lastError: k.lastError ?? null,
      lastErrorAgeMs: age(now, k.lastErrorAt),
    })),
  };
}

export async function podMetricsView(deps: ResourceDeps, account: string, namespace: string | undefined): Promise<PodMetricsView> {
  const { pods, at } = await podMetrics(deps.table, account);
  return {
    account,
    storedAt: at === undefined ? null : new Date(at).toISOString(),
    pods: namespace === undefined ? pods : pods.filter((p) => p.namespace === namespace),
  };
}
