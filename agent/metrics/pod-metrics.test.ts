import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { podMetrics } from '../../shared/table/resources/pod-metrics.ts';
import { CacheFixture, WAIT } from '../../test/resource-cache-harness.ts';
import pino from 'pino';
import { systemClock } from '../../shared/clock.ts';
import { acquireTask } from '../tasks/acquire.ts';
import { TaskBudget } from '../tasks/budget.ts';
import { podMetricsMessages } from './pod-metrics.ts';

let f: CacheFixture;
beforeEach(async () => {
  f = await new CacheFixture().start();
  for (const ns of ['a', 'b']) f.kube.store.ensureNamespace(ns);
});
afterEach(async () => {
  await f.close();
});

const usage = (cpu: string, memory: string) => [{ name: 'app', usage: { cpu, memory } }];
const stored = async () => (await podMetrics(f.table, f.account)).pods.map((p) => `${p.namespace}/${p.name}:${p.containers.map((c) => `${c.cpu},${c.memory}`).join(';')}`);
const metricsRequests = () => f.kube.requests.log().filter((r) => r.path.startsWith('/apis/metrics.k8s.io/v1beta1/') && r.path.endsWith('/pods'));

describe('pod metrics', () => {
  it('are read every 20 seconds and the driver keeps the latest per pod', async () => {
    const clock = new ManualClock(Date.now());
    f.kube.podMetrics.set('a', 'web-0', usage('12m', '34Mi'));
    f.kube.podMetrics.set('b', 'db-0', usage('100m', '1Gi'));
    await f.agent({ metricsClock: clock, settings: { metrics: true } });
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:12m,34Mi', 'b/db-0:100m,1Gi']), WAIT);
    f.kube.podMetrics.set('a', 'web-0', usage('15m', '40Mi'));
    f.kube.podMetrics.delete('b', 'db-0');
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1), WAIT);
    await clock.advance(19_000);
    expect(metricsRequests()).toHaveLength(1);
    await clock.advance(1000);
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:15m,40Mi']), WAIT);
    expect(metricsRequests()).toHaveLength(2);
  });

  it('each reading is a metrics task of the budget: none is made while the budget is used up', async () => {
    const budget = new TaskBudget({ totalBudget: 1, budgetPerAccount: 0, queueCheckFrequencyMs: 2000 }, { clock: systemClock, logger: pino({ level: 'silent' }) });
    const release = await acquireTask(budget, { account: 'other', kind: 'informer', name: 'Pod' });
    f.kube.podMetrics.set('a', 'web-0', usage('12m', '34Mi'));
    await f.agent({ settings: { metrics: true }, budget });
    await vi.waitFor(() => expect(budget.waiting()).toContainEqual(expect.objectContaining({ account: 'prod', kind: 'metrics', name: 'pod metrics' })), WAIT);
    expect(metricsRequests()).toHaveLength(0);
    release();
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:12m,34Mi']), WAIT);
  });

  it('with namespaces, are read per namespace', async () => {
    f.kube.podMetrics.set('a', 'web-0', usage('12m', '34Mi'));
    f.kube.podMetrics.set('b', 'db-0', usage('100m', '1Gi'));
    await f.agent({ settings: { metrics: true, namespaces: ['a'] } });
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:12m,34Mi']), WAIT);
    expect(metricsRequests().map((r) => r.namespace)).toEqual(['a']);
  });

  it('leave out the namespaces omitNamespaces names: not read with namespaces, dropped from the cluster-wide reading without', async () => {
    f.kube.store.ensureNamespace('c');
    f.kube.podMetrics.set('a', 'web-0', usage('12m', '34Mi'));
    f.kube.podMetrics.set('b', 'db-0', usage('100m', '1Gi'));
    f.kube.podMetrics.set('c', 'job-0', usage('1m', '1Mi'));
    const listed = await f.agent({ settings: { metrics: true, namespaces: ['a', 'b'], omitNamespaces: ['b'] } });
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:12m,34Mi']), WAIT);
    expect(metricsRequests().map((r) => r.namespace)).toEqual(['a']);
    await listed.stop();
    await f.agent({ settings: { metrics: true, omitNamespaces: ['b'] } });
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:12m,34Mi', 'c/job-0:1m,1Mi']), WAIT);
    expect(metricsRequests().at(-1)?.namespace).toBe('');
  });

  it('are not read without metrics: true', async () => {
    const agent = await f.agent();
    await vi.waitFor(() => expect(agent.worker.run?.scopes().length).toBeGreaterThan(0), WAIT);
    expect(metricsRequests()).toHaveLength(0);
  });

  it('a cluster without the metrics API gets one warning, not a crash loop, and is used once it appears', async () => {
    const clock = new ManualClock(Date.now());
    f.kube.setMetricsApi(false);
    const agent = await f.agent({ metricsClock: clock, settings: { metrics: true } });
    const warnings = () => agent.logs.lines.filter((l) => String(l.msg).includes('does not serve the metrics.k8s.io API'));
    await vi.waitFor(() => expect(warnings()).toHaveLength(1), WAIT);
    for (let i = 0; i < 3; i++) {
      // The loop waits for its next reading, and nothing else waits on this clock.
      await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1), WAIT);
      await clock.advance(20_000);
      await vi.waitFor(() => expect(metricsRequests()).toHaveLength(i + 2), WAIT);
    }
    expect(warnings()).toHaveLength(1);
    expect(agent.logs.lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    f.kube.setMetricsApi(true);
    f.kube.podMetrics.set('a', 'web-0', usage('1m', '2Mi'));
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1), WAIT);
    await clock.advance(20_000);
    await vi.waitFor(async () => expect(await stored()).toEqual(['a/web-0:1m,2Mi']), WAIT);
    expect(agent.logs.lines.some((l) => l.msg === 'the metrics.k8s.io API answers again; pod metrics are sent')).toBe(true);
  });

  it('a large reading is split by namespace, never inside one', () => {
    const pods = (ns: string, n: number) => Array.from({ length: n }, (_, i) => ({ namespace: ns, name: `p${i}`, timestamp: '', window: '', containers: [] }));
    const parts = podMetricsMessages([...pods('a', 1500), ...pods('b', 1500), ...pods('c', 10)], [], 'prod', 1, 9);
    expect(parts.map((p) => [p.namespaces, p.pods.length, p.part, p.last])).toEqual([
      [['a'], 1500, 1, false],
      [['b', 'c'], 1510, 2, true],
    ]);
    expect(podMetricsMessages([], ['x'], 'prod', 1, 10)).toEqual([{ account: 'prod', cachingEpoch: 1, readingId: 10, namespaces: ['x'], pods: [], part: 1, last: true }]);
  });
});
