/**
 * The chart's metrics objects (deploy/helm/vendor-agent, docs/metrics.md#the-charts-metrics-objects):
 * none by default; when enabled, a Service on the agents' metrics port, a ServiceMonitor for it and a
 * PrometheusRule holding exactly the rules of deploy/observability/agent-alerts.yml.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseRuleFile } from '../observability/rule-file.ts';
import { Renderer, RenderFailure } from './helm-template.ts';
import { parseObjects, type KubeObject } from './kube-objects.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CHART = join(ROOT, 'deploy/helm/vendor-agent');
const TEMPLATES = join(CHART, 'templates');
const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion: string };
const METRICS_TEMPLATES = ['metrics-service.yaml', 'servicemonitor.yaml', 'prometheusrule.yaml'];

/** The chart's metrics templates rendered with `metrics` (and the `config.prometheus.port`) given. */
function renderMetrics(metrics: Record<string, unknown>, port = 8008): KubeObject[] {
  const values = { ...defaults, config: { ...(defaults.config as object), prometheus: { enabled: true, port } }, metrics };
  const renderer = new Renderer({
    Values: values,
    Release: { Name: 'vendor-agent', Namespace: 'vendor', Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  });
  for (const file of readdirSync(TEMPLATES).filter((f) => f.endsWith('.tpl'))) renderer.load(readFileSync(join(TEMPLATES, file), 'utf8'));
  return METRICS_TEMPLATES.flatMap((f) => parseObjects(renderer.render(readFileSync(join(TEMPLATES, f), 'utf8')), f));
}

const on = { service: { enabled: true, annotations: {} }, serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'kube-prometheus' } }, prometheusRule: { enabled: true, labels: {} } };

describe('the chart: metrics Service, ServiceMonitor and PrometheusRule', () => {
  it('makes none of them by default', () => {
    expect(renderMetrics(defaults.metrics as Record<string, unknown>)).toEqual([]);
  });

  it('when enabled, a Service on the metrics port selecting the agents, and a ServiceMonitor that selects the Service', () => {
    const objects = renderMetrics(on, 9100);
    const service = objects.find((o) => o.kind === 'Service') as KubeObject & { spec: { selector: object; ports: { name: string; port: number; targetPort: string }[] }; metadata: { labels: Record<string, string> } };
    expect(service.metadata).toMatchObject({ name: 'vendor-agent-metrics', namespace: 'vendor' });
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'vendor-agent', 'app.kubernetes.io/instance': 'vendor-agent' });
    expect(service.spec.ports).toEqual([{ name: 'metrics', port: 9100, targetPort: 'metrics', protocol: 'TCP' }]);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] }; metadata: { labels: Record<string, string> } };
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels['release']).toBe('kube-prometheus');
    // The monitor's selector matches the Service's labels, and its endpoint the Service's port name.
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels[k]).toBe(v);
    expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    // The pods' container port the Service targets.
    expect(readFileSync(join(TEMPLATES, 'deployment.yaml'), 'utf8')).toMatch(/- name: metrics\n\s+containerPort: \{\{ \.Values\.config\.prometheus\.port \}\}/);
  });

  it('the PrometheusRule holds the rules of deploy/observability/agent-alerts.yml, unchanged', () => {
    const rule = renderMetrics(on).find((o) => o.kind === 'PrometheusRule') as KubeObject & { spec: unknown };
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    const committed = parseRuleFile(readFileSync(join(ROOT, 'deploy/observability/agent-alerts.yml'), 'utf8'));
    expect(parseRuleFile(JSON.stringify(rule.spec))).toEqual(committed);
  });

  it('refuses a ServiceMonitor without the Service it scrapes', () => {
    expect(() => renderMetrics({ ...on, service: { enabled: false, annotations: {} } })).toThrow(new RenderFailure('metrics.serviceMonitor.enabled needs metrics.service.enabled: the ServiceMonitor scrapes that Service'));
  });
});
