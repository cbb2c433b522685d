/**
 * The agent's `/cache` (on the health server): per held account, each scope its cache runs and where
 * it is (waiting for budget, listing, watching, reconnecting its watch), the tasks waiting for budget,
 * and whether the tasks are stopped because the connection to the driver is lost
 * (docs/agent-config.md#cache-state). Names of accounts, kinds and namespaces only: nothing secret.
 */
import type { TaskBudget, WaitingTask } from '../tasks/budget.ts';

/** Where one scope is. */
export type ScopeCondition = 'waiting-for-budget' | 'listing' | 'watching' | 'reconnecting';

/** What the account holder tells about one held account (structurally `HeldAccountCache`). */
export interface AccountCacheSource {
  account: string;
  caching: boolean;
  suspended: boolean;
  scopes: readonly {
    scope: string;
    resourceVersion: string | undefined;
    state: { readonly watching: boolean; readonly objects: number; readonly relists: number; readonly lastError?: string | undefined };
  }[];
}

export interface CacheStateSource {
  /** True while every task is stopped because the connection to the driver is lost. */
  suspended(): boolean;
  accounts(): AccountCacheSource[];
}

export interface ScopeReport {
  scope: string;
  state: ScopeCondition;
  objects: number;
  resourceVersion: string | null;
  relists: number;
  lastError: string | null;
}

export interface CacheStateReport {
  /** Every task is stopped: no stream to the driver for the whole grace. */
  tasksStopped: boolean;
  budget: { totalBudget: number; budgetPerAccount: number; used: number; usedByAccount: Record<string, number>; waiting: (WaitingTask & { waitingMs: number })[] };
  accounts: { account: string; caching: boolean; tasksStopped: boolean; scopes: ScopeReport[] }[];
}

const sources = new WeakMap<object, CacheStateSource>();

/** The account holder of an agent (keyed by its context) registers what `/cache` reads. */
export function setCacheStateSource(owner: object, source: CacheStateSource | undefined): void {
  if (source === undefined) sources.delete(owner);
  else sources.set(owner, source);
}

export function cacheStateSource(owner: object): CacheStateSource | undefined {
  return sources.get(owner);
}

function conditionOf(scope: AccountCacheSource['scopes'][number], waitsForBudget: boolean): ScopeCondition {
  if (waitsForBudget) return 'waiting-for-budget';
  if (scope.resourceVersion === undefined) return 'listing';
  return scope.state.watching ? 'watching' : 'reconnecting';
}

export function cacheStateReport(source: CacheStateSource | undefined, budget: TaskBudget, limits: { totalBudget: number; budgetPerAccount: number }, now: number): CacheStateReport {
  const waiting = budget.waiting();
  const usage = budget.usage();
  const listWaits = new Set(waiting.filter((w) => w.kind === 'informer').map((w) => `${w.account}\n${w.name}`));
  return {
    tasksStopped: source?.suspended() ?? false,
    budget: { ...limits, used: usage.total, usedByAccount: usage.byAccount, waiting: waiting.map((w) => ({ ...w, waitingMs: Math.max(0, now - w.since) })) },
    accounts: (source?.accounts() ?? []).map((a) => ({
      account: a.account,
      caching: a.caching,
      tasksStopped: a.suspended,
      scopes: a.scopes
        .map((s) => ({
          scope: s.scope,
          state: conditionOf(s, listWaits.has(`${a.account}\n${s.scope}`)),
          objects: s.state.objects,
          resourceVersion: s.resourceVersion ?? null,
          relists: s.state.relists,
          lastError: s.state.lastError ?? null,
        }))
        .sort((x, y) => x.scope.localeCompare(y.scope)),
    })),
  };
}
