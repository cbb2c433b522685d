/**
 * The budget against a real cache, measured where it matters: at the API server. Lists are slowed
 * down so that they overlap, and the test API server counts how many run at once.
 */
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { CacheFixture, WAIT, type CacheAgent } from '../../test/resource-cache-harness.ts';
import { cacheStateReport } from '../observability/cache-state.ts';
import { ListGate } from '../resources/list-gate.ts';
import { TaskBudget } from './budget.ts';

let f: CacheFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const LIST_LATENCY_MS = 100;

async function syncedCache(budget?: TaskBudget): Promise<{ fixture: CacheFixture; agent: CacheAgent }> {
  const fixture = (f = await new CacheFixture().start({ watchList: false }));
  fixture.kube.faults.latency(LIST_LATENCY_MS, { verb: 'list' });
  // A gate wider than the budget, so the budget is what holds the lists back.
  const agent = await fixture.agent({ lists: new ListGate(16), ...(budget === undefined ? {} : { budget }) });
  return { fixture, agent };
}

const synced = (agent: CacheAgent) =>
  vi.waitFor(() => {
    const s = agent.worker.run!.status();
    expect(s.scopes).toBeGreaterThan(5);
    expect(s.synced).toBe(s.scopes);
  }, WAIT);

const budgetOf = (totalBudget: number, budgetPerAccount = 0) =>
  new TaskBudget({ totalBudget, budgetPerAccount, queueCheckFrequencyMs: 2000 }, { clock: systemClock, logger: pino({ level: 'silent' }) });

describe('task budgets hold the cluster to their lists', () => {
  it('a total budget of 2 allows at most 2 lists at once at the API server, and /cache shows the scopes that wait', async () => {
    const budget = budgetOf(2);
    const { fixture, agent } = await syncedCache(budget);
    const report = () =>
      cacheStateReport({ suspended: () => false, accounts: () => [{ account: 'prod', caching: true, suspended: false, scopes: agent.worker.cacheScopes() }] }, budget, { totalBudget: 2, budgetPerAccount: 0 }, systemClock.now());
    await vi.waitFor(() => {
      const states = report().accounts[0]!.scopes.map((s) => s.state);
      expect(states).toContain('waiting-for-budget');
      expect(report().budget.waiting[0]).toMatchObject({ account: 'prod', kind: 'informer', cost: 1 });
    }, { ...WAIT, interval: 10 });
    await synced(agent);
    expect(fixture.kube.requests.peakInFlight({ verb: 'list' })).toBe(2);
    expect(report().accounts[0]!.scopes.every((s) => s.state === 'watching' || s.state === 'reconnecting')).toBe(true);
    expect(budget.usage()).toMatchObject({ total: 0, waiting: 0 });
  });

  it('the per-account budget holds one account to its lists the same way', async () => {
    const budget = budgetOf(0, 3);
    const { fixture, agent } = await syncedCache(budget);
    await synced(agent);
    expect(fixture.kube.requests.peakInFlight({ verb: 'list' })).toBe(3);
  });

  it('without a budget the same cache runs more lists at once (what the budget is measured against)', async () => {
    const { fixture, agent } = await syncedCache();
    await synced(agent);
    expect(fixture.kube.requests.peakInFlight({ verb: 'list' })).toBeGreaterThan(3);
  });
});
