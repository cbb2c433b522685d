import { afterEach, describe, expect, it } from 'vitest';
import { get } from '../../test/support/http.ts';
import type { RunningHttpServer } from './http-server.ts';
import { VERSION } from '../../shared/version.ts';
import { forgetKindCache, recordKindCache } from './cache-metrics.ts';
import { createAgentMetrics } from './metrics.ts';
import { startMetricsServer } from './metrics-server.ts';

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Prometheus endpoint', () => {
  it('serves the agent metrics on /metrics and /prometheus_metrics', async () => {
    const metrics = createAgentMetrics();
    metrics.driverConnected.set(1);
    metrics.driverReconnects.inc(2);
    metrics.accounts.set({ state: 'ACTIVE' }, 3);
    metrics.watchEvents.inc({ account: 'prod', kind: 'Pod', type: 'ADDED' }, 5);
    metrics.relists.inc({ account: 'prod', kind: 'Pod' });
    metrics.cacheObjects.set({ account: 'prod', kind: 'Pod' }, 40);
    metrics.cacheBytes.set({ account: 'prod', kind: 'Pod' }, 123456);
    metrics.operations.inc({ type: 'deploy', result: 'success' });
    metrics.operationDuration.observe({ type: 'deploy', result: 'success' }, 0.7);
    metrics.retries.inc({ target: 'kubernetes', account: 'prod' });
    metrics.taskBudgetLimit.set({ scope: 'total' }, 10);
    metrics.taskBudgetUsed.set({ account: '' }, 4);
    metrics.tasks.set({ state: 'running', kind: 'informer' }, 4);
    metrics.configReloads.inc({ result: 'applied' });
    recordKindCache(metrics, { account: 'prod', kind: 'Pod' }, { scopes: 3, watching: 2, lastEventAt: 1_700_000_000_500 });
    server = await startMetricsServer({ registry: metrics.registry, port: 0, host: '127.0.0.1' });

    for (const path of ['/metrics', '/prometheus_metrics']) {
      const answer = await get(`${server.url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toContain('text/plain');
      for (const line of [
        'vendor_agent_driver_connected 1',
        'vendor_agent_driver_reconnects_total 2',
        'vendor_agent_accounts{state="ACTIVE"} 3',
        'vendor_agent_watch_events_total{account="prod",kind="Pod",type="ADDED"} 5',
        'vendor_agent_relists_total{account="prod",kind="Pod"} 1',
        'vendor_agent_cache_objects{account="prod",kind="Pod"} 40',
        'vendor_agent_cache_bytes{account="prod",kind="Pod"} 123456',
        'vendor_agent_operations_total{type="deploy",result="success"} 1',
        'vendor_agent_operation_duration_seconds_bucket{le="1",type="deploy",result="success"} 1',
        'vendor_agent_retries_total{target="kubernetes",account="prod"} 1',
        'vendor_agent_task_budget_limit{scope="total"} 10',
        'vendor_agent_task_budget_used{account=""} 4',
        'vendor_agent_tasks{state="running",kind="informer"} 4',
        'vendor_agent_config_reloads_total{result="applied"} 1',
        `vendor_agent_build_info{version="${VERSION}"} 1`,
        'vendor_agent_cache_scopes{account="prod",kind="Pod"} 3',
        'vendor_agent_cache_watching_scopes{account="prod",kind="Pod"} 2',
        'vendor_agent_cache_last_event_timestamp_seconds{account="prod",kind="Pod"} 1700000000.5',
      ]) {
        expect(answer.text).toContain(`\n${line}\n`);
      }
      // Process metrics come from prom-client's default collectors.
      expect(answer.text).toMatch(/\nprocess_resident_memory_bytes \d+/);
      expect(answer.text).toMatch(/\nnodejs_eventloop_lag_seconds /);
    }
  });

  it('a kind that stops being cached takes its cache series with it; a kind with no event yet has no last-event series', async () => {
    const metrics = createAgentMetrics();
    recordKindCache(metrics, { account: 'prod', kind: 'Pod' }, { scopes: 1, watching: 1, lastEventAt: 1_000 });
    recordKindCache(metrics, { account: 'prod', kind: 'Service' }, { scopes: 1, watching: 0 });
    forgetKindCache(metrics, { account: 'prod', kind: 'Pod' });
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('kind="Pod"');
    expect(text).toContain('vendor_agent_cache_scopes{account="prod",kind="Service"} 1');
    expect(text).not.toContain('vendor_agent_cache_last_event_timestamp_seconds{');
  });

  it('answers 404 elsewhere and 405 for other methods', async () => {
    server = await startMetricsServer({ registry: createAgentMetrics().registry, port: 0, host: '127.0.0.1' });
    expect((await get(`${server.url}/`)).status).toBe(404);
    expect((await get(`${server.url}/metrics`, { method: 'DELETE' })).status).toBe(405);
  });

  it('two agents in one process keep separate registries', async () => {
    const a = createAgentMetrics();
    const b = createAgentMetrics();
    a.driverReconnects.inc();
    expect(await a.registry.getSingleMetricAsString('vendor_agent_driver_reconnects_total')).toMatch(/_total 1$/);
    expect(await b.registry.getSingleMetricAsString('vendor_agent_driver_reconnects_total')).toMatch(/_total 0$/);
  });
});
