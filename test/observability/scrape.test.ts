/**
 * The dashboard and the alert rules (deploy/observability/) read only series that exist: a real
 * driver process and a real agent process (against the test Kubernetes API server) are scraped,
 * and every metric name in every panel query, variable query and rule expression must be one of
 * theirs. The rule files are also checked as Prometheus rule files, each alert with its runbook.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { get } from '../support/http.ts';
import { startChild, type Child } from '../support/process.ts';
import { tableProcessEnv } from '../support/table-env.ts';
import { AGENT_TOKEN, FAST_ASSIGNMENT, useAccountsWorld } from '../support/accounts-world.ts';
import { exportedNames, metricNamesOf, unexported } from './promql-names.ts';
import { parseRuleFile } from './rule-file.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OBSERVABILITY = join(ROOT, 'deploy/observability');
const RULE_FILES = readdirSync(OBSERVABILITY).filter((f) => f.endsWith('-alerts.yml')).sort();
const DASHBOARD = 'vendor-agent-dashboard.json';

interface Expression {
  source: string;
  expr: string;
}

/** Every PromQL expression of the rule files and the dashboard, named by where it is. */
function expressions(): Expression[] {
  const out: Expression[] = [];
  for (const file of RULE_FILES) {
    for (const group of parseRuleFile(readFileSync(join(OBSERVABILITY, file), 'utf8')).groups) {
      for (const rule of group.rules) out.push({ source: `${file} ${'alert' in rule ? rule.alert : rule.record}`, expr: rule.expr });
    }
  }
  const dashboard = JSON.parse(readFileSync(join(OBSERVABILITY, DASHBOARD), 'utf8')) as {
    panels: { title: string; type: string; targets?: { expr: string }[] }[];
    templating: { list: { name: string; type: string; query: unknown }[] };
  };
  for (const panel of dashboard.panels) for (const t of panel.targets ?? []) out.push({ source: `${DASHBOARD} panel "${panel.title}"`, expr: t.expr });
  for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
    out.push({ source: `${DASHBOARD} variable ${variable.name}`, expr: (variable.query as { query: string }).query });
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');

describe('alert rules and dashboard (deploy/observability)', () => {
  it('the rule files have the shape of Prometheus rule files, and every alert names a runbook section of docs/metrics.md', () => {
    expect(RULE_FILES).toEqual(['agent-alerts.yml', 'driver-alerts.yml']);
    const anchors = new Set(readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => anchorOf(l.replace(/^#+ /, ''))));
    const alerts = RULE_FILES.flatMap((f) => parseRuleFile(readFileSync(join(OBSERVABILITY, f), 'utf8')).groups.flatMap((g) => g.rules));
    expect(alerts.length).toBeGreaterThanOrEqual(8);
    for (const rule of alerts) {
      const runbook = 'annotations' in rule ? rule.annotations?.['runbook'] : undefined;
      expect(runbook, JSON.stringify(rule)).toMatch(/^docs\/metrics\.md#/);
      expect(anchors, `${runbook}`).toContain(runbook!.split('#')[1]);
    }
  });

  it('refuses a rule file of another shape, naming the key', () => {
    expect(() => parseRuleFile('groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: up\n        severity: page\n')).toThrow();
    expect(() => parseRuleFile('groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: up\n        for: five minutes\n')).toThrow(/duration/);
    expect(() => parseRuleFile('rules: []\n')).toThrow();
  });

  it('reads metric names out of PromQL, not functions, labels, ranges or keywords', () => {
    expect(metricNamesOf('histogram_quantile(0.99, sum by (le, operation) (rate(a_seconds_bucket{instance=~"$instance",x="sum(y)"}[$__rate_interval])))')).toEqual(['a_seconds_bucket']);
    expect(metricNamesOf('sum(rate(b_total{state=~"FAILED|TIMED_OUT"}[15m])) / sum(rate(b_total[15m])) > 0.25')).toEqual(['b_total']);
    expect(metricNamesOf('c < d and on (pod) e offset 5m unless ignoring(x) group_left(y) f')).toEqual(['c', 'd', 'e', 'f']);
    expect(metricNamesOf('time() - max by (kind) (g{account="$account"})')).toEqual(['g']);
    expect(metricNamesOf('label_values(h, account)')).toEqual(['h']);
    expect(metricNamesOf('count by (version) (i) * 1e3')).toEqual(['i']);
  });

  it('reads the names a scrape offers, labelled series with no sample yet included', () => {
    const names = exportedNames('# HELP a_total x\n# TYPE a_total counter\n# TYPE h_seconds histogram\nh_seconds_bucket{le="1"} 0\n# TYPE g gauge\ng 1\n');
    expect([...names].sort()).toEqual(['a_total', 'g', 'h_seconds_bucket', 'h_seconds_count', 'h_seconds_sum']);
    // What the check below reports for a rule that names a series nobody exports.
    expect(unexported([{ source: 'rule X', expr: 'rate(a_total[5m]) > 0 or vendor_agent_no_such_series > 0' }], names)).toEqual([['rule X', 'vendor_agent_no_such_series']]);
  });
});

const world = useAccountsWorld();

function startDriverProcess(): Child {
  const path = join(world.dir, 'observability-driver.yml');
  writeFileSync(
    path,
    stringify({
      grpc: { host: '127.0.0.1', port: 0 },
      auth: { tokens: [AGENT_TOKEN] },
      assignment: FAST_ASSIGNMENT,
      metrics: { enabled: true, host: '127.0.0.1', port: 0 },
      // A driver-defined account the test activates through the API.
      kubernetes: { accounts: [{ name: 'staging', kubeconfigFile: world.kubeconfig('staging') }] },
    }),
  );
  const env = { ...process.env, ...tableProcessEnv({ endpoint: world.tables.endpoint, tableName: world.table.tableName }), VENDOR_LOG_FORMAT: 'json' };
  return startChild(process.execPath, ['driver/main.ts', '--config', path], { cwd: ROOT, env });
}

function startAgentProcess(driverPort: number): Child {
  const path = join(world.dir, 'observability-agent.yml');
  writeFileSync(
    path,
    stringify({
      driver: { grpc: `127.0.0.1:${driverPort}`, insecure: true, auth: { token: AGENT_TOKEN } },
      server: { host: '127.0.0.1', port: 0 },
      prometheus: { enabled: true, host: '127.0.0.1', port: 0 },
      logging: { format: 'json' },
      kubernetes: { accounts: [{ name: 'prod', kubeConfigFile: world.kubeconfig('prod'), kinds: ['configMap'] }] },
    }),
  );
  const env = { ...process.env, VENDOR_AGENT_ID: 'observed-agent', VENDOR_DEPLOYMENT_NAME: 'vendor-agent', POD_NAMESPACE: 'infra' };
  return startChild(process.execPath, ['agent/main.ts', '--config', path], { cwd: ROOT, env });
}

const fieldOf = async (child: Child, msg: string, field: string) => (JSON.parse(await child.line((l) => l.includes(`"msg":"${msg}"`))) as Record<string, unknown>)[field];

/** The value of one sample of a scrape (`name{labels}` as written), undefined when absent. */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('what a real driver and agent export', () => {
  it('covers every metric name the dashboard and the alert rules read', async () => {
    await world.fresh([]);
    world.kube.store.ensureNamespace('shop');
    world.kube.store.upsert({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'shop', name: 'settings' }, data: { a: '1' } });
    const driver = startDriverProcess();
    let agent: Child | undefined;
    try {
      const driverMetrics = String(await fieldOf(driver, 'metrics listening', 'url'));
      agent = startAgentProcess(Number(await fieldOf(driver, 'driver listening', 'port')));
      const agentMetrics = String(await fieldOf(agent, 'metrics server listening', 'url'));
      // Each binds to its own host setting (metrics.host, prometheus.host), not to every interface.
      expect([new URL(driverMetrics).hostname, new URL(agentMetrics).hostname]).toEqual(['127.0.0.1', '127.0.0.1']);
      // The account is held and cached, and its objects reached the table through the driver.
      const scrape = async (): Promise<[string, string]> => [(await get(`${driverMetrics}/metrics`)).text, (await get(`${agentMetrics}/metrics`)).text];
      let driverText = '';
      let agentText = '';
      await vi.waitFor(async () => {
        [driverText, agentText] = await scrape();
        expect(sample(agentText, 'vendor_agent_cache_watching_scopes{account="prod",kind="ConfigMap"}')).toBeGreaterThan(0);
        expect(sample(driverText, 'vendor_driver_resource_objects_written_total')).toBeGreaterThan(0);
      }, { timeout: 40_000, interval: 200 });
      // A change while watching: a watch event, which the last-event gauge follows (the cache gauges are refreshed every 10 s).
      world.kube.store.upsert({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'shop', name: 'more' }, data: { b: '2' } });
      // An account activated through the API: a work-feed entry the driver picks up.
      await world.activate('staging', 'vendor-agent_infra');
      await vi.waitFor(async () => {
        [driverText, agentText] = await scrape();
        expect(sample(agentText, 'vendor_agent_cache_last_event_timestamp_seconds{account="prod",kind="ConfigMap"}')).toBeGreaterThan(1_600_000_000);
        expect(sample(driverText, 'vendor_driver_resource_objects_written_total')).toBeGreaterThan(1);
        expect(sample(driverText, 'vendor_driver_assignment_pickup_lag_seconds_count')).toBeGreaterThan(0);
      }, { timeout: 40_000, interval: 200 });

      expect(sample(agentText, 'vendor_agent_build_info{version="0.1.0"}')).toBe(1);
      expect(sample(agentText, 'vendor_agent_cache_scopes{account="prod",kind="ConfigMap"}')).toBe(sample(agentText, 'vendor_agent_cache_watching_scopes{account="prod",kind="ConfigMap"}'));
      expect(sample(driverText, 'vendor_driver_build_info{version="0.1.0"}')).toBe(1);
      expect(sample(driverText, 'vendor_driver_sessions{zone="vendor-agent_infra",identity="fleet"}')).toBe(1);
      expect(sample(driverText, 'vendor_driver_streams_opened_total')).toBe(1);
      expect(sample(driverText, 'vendor_driver_assignment_results_total{ok="true",outcome="recorded"}')).toBeGreaterThan(0);
      expect(sample(driverText, 'vendor_driver_assignment_pickup_lag_seconds_count')).toBeGreaterThan(0);
      expect(sample(driverText, 'vendor_driver_assignment_queue_depth')).toBe(0);
      expect(sample(driverText, 'vendor_driver_resource_events_received_total')).toBeGreaterThan(0);
      expect(sample(driverText, 'vendor_driver_resource_write_lag_seconds_count')).toBeGreaterThan(0);
      expect(sample(driverText, 'vendor_driver_table_request_duration_seconds_count{operation="Query"}')).toBeGreaterThan(0);
      expect(sample(driverText, 'vendor_driver_operations_open{state="QUEUED"}')).toBe(0);

      const exported = new Set([...exportedNames(driverText), ...exportedNames(agentText)]);
      const all = expressions();
      expect(all.length).toBeGreaterThan(30);
      expect(unexported(all, exported)).toEqual([]);
    } finally {
      agent?.process.kill('SIGKILL');
      driver.process.kill('SIGKILL');
      await Promise.all([agent?.exited, driver.exited]);
    }
  }, 120_000);
});
