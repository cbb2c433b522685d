/**
 * How many objects each scope will list, asked before a first sync so the list gate can start the
 * largest lists first (list-gate.ts). One `limit=1` list per scope: the API server answers with one
 * object and `metadata.remainingItemCount`, the number of objects after it, which costs it a count
 * and not a list. Where the server says nothing of the rest (a selector, an older server), or the
 * question fails or takes too long, the size stays unknown and that scope queues as an ordinary one:
 * a better order is worth little next to starting the sync at all.
 */
import type { Clock } from '../../shared/clock.ts';
import type { ClusterClient } from '../clusters/index.ts';
import { collectionPath, type CacheScope } from './types.ts';

/** Questions asked at once: a few round trips whatever the number of scopes, without a burst of hundreds. */
const CONCURRENCY = 8;

/** Longest wait for the answers; what has not come by then stays unknown. */
export const SIZE_QUESTION_BUDGET_MS = 2000;

interface LimitedList {
  items?: unknown[];
  metadata?: { continue?: string; remainingItemCount?: number };
}

/** The objects one scope holds, from its first page of one; undefined when the answer does not say. */
export function objectsOfFirstPage(page: LimitedList): number | undefined {
  const items = Array.isArray(page.items) ? page.items.length : 0;
  const rest = page.metadata?.remainingItemCount;
  if (typeof rest === 'number' && Number.isFinite(rest) && rest >= 0) return items + rest;
  // No continue token: this page was the whole list.
  return page.metadata?.continue ? undefined : items;
}

/** The expected objects per scope (same order as `scopes`); undefined where unknown. */
export async function expectedObjects(
  cluster: ClusterClient,
  scopes: readonly CacheScope[],
  deps: { clock: Clock; signal: AbortSignal },
): Promise<(number | undefined)[]> {
  const out: (number | undefined)[] = scopes.map(() => undefined);
  const budget = new AbortController();
  const onStop = () => budget.abort(deps.signal.reason);
  deps.signal.addEventListener('abort', onStop, { once: true });
  let next = 0;
  const worker = async () => {
    while (!budget.signal.aborted && next < scopes.length) {
      const i = next++;
      try {
        const res = await cluster.request({ path: collectionPath(scopes[i]!), query: { limit: 1 }, signal: budget.signal, retry: false });
        out[i] = objectsOfFirstPage(res.json<LimitedList>());
      } catch {
        // Unknown: the scope lists in arrival order; its own list reports any real failure.
      }
    }
  };
  const asked = Promise.all(Array.from({ length: Math.min(CONCURRENCY, scopes.length) }, worker));
  const timer = new AbortController();
  try {
    await Promise.race([asked, deps.clock.sleep(SIZE_QUESTION_BUDGET_MS, timer.signal).catch(() => undefined)]);
  } finally {
    timer.abort();
    budget.abort(new Error('size questions ended'));
    deps.signal.removeEventListener('abort', onStop);
  }
  return out;
}
