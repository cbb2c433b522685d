import { configJsonSchema } from '../agent/config/json-schema.ts';

/*
 * The chart's values.schema.json (deploy/helm/vendor-agent), which Helm checks every install and
 * upgrade against. `config` is vendor-agent.yml, so its schema is the agent's own (the schema of
 * docs/vendor-agent.schema.json) with two changes for an install:
 * - every mapping is closed: a misspelt key fails the install instead of being ignored by the agent
 *   with a warning in a pod's log;
 * - `driver.grpc` is required and has no default, so a forgotten driver address fails the install
 *   instead of leaving pods that never become Ready.
 * The other values are typed here.
 */

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of a schema in which each object listing its properties refuses any other key. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!isSchema(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    // Below `properties` the keys are names of the configuration, not schema keywords.
    out[key] = key === 'properties' && isSchema(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, closed(v)])) : closed(value);
  }
  if (isSchema(out['properties']) && !('additionalProperties' in out)) out['additionalProperties'] = false;
  return out;
}

function property(schema: Schema, key: string): Schema {
  const found = (schema['properties'] as Record<string, unknown> | undefined)?.[key];
  if (!isSchema(found)) throw new Error(`the agent's schema has no key ${key}`);
  return found;
}

function requireKey(schema: Schema, key: string): void {
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  if (!required.includes(key)) schema['required'] = [...required, key];
}

/** The schema of the chart's `config` value: vendor-agent.yml as an install must write it. */
export function chartConfigSchema(): Schema {
  const { $schema: _ignored, title: _title, ...agent } = configJsonSchema();
  const config = closed(agent) as Schema;
  const driver = property(config, 'driver');
  const grpc = property(driver, 'grpc');
  delete grpc['default'];
  grpc['description'] = `${String(grpc['description'])} Required: the \`grpc\` output of \`sst deploy\`, e.g. grpc.vendor.example.com:443.`;
  requireKey(driver, 'grpc');
  delete driver['default'];
  requireKey(config, 'driver');
  config['description'] = 'vendor-agent.yml, written into the ConfigMap as it is (docs/agent-config.md).';
  return config;
}

const text = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const flag = (description: string): Schema => ({ type: 'boolean', description });
const strings = (description: string): Schema => ({ type: 'object', additionalProperties: { type: 'string' }, description });
const objects = (description: string, required: string[] = []): Schema => ({
  type: 'array',
  items: { type: 'object', required, properties: Object.fromEntries(required.map((k) => [k, { type: 'string', minLength: 1 }])) },
  description,
});
const mapping = (description: string, properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
  description,
});
/** A Kubernetes object or field the chart passes on as it is; the API server checks it. */
const kube = (description: string): Schema => ({ type: 'object', description });

export function chartValuesSchema(): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'values of the vendor-agent chart',
    type: 'object',
    properties: {
      replicaCount: { type: 'integer', minimum: 1, description: 'Agents of the zone: one caches each account, the others stand by.' },
      image: mapping('The agent image (deploy/docker/agent.Dockerfile).', {
        repository: text('Image repository.', { minLength: 1 }),
        tag: text("Image tag; empty: the chart's appVersion."),
        pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'], description: 'Image pull policy.' },
      }),
      imagePullSecrets: objects('Secrets to pull the image with: [{name: ...}].', ['name']),
      nameOverride: text('Replaces the chart name in object names.'),
      fullnameOverride: text('Replaces the full name: the Deployment name and the first half of the zone id.'),
      serviceAccount: mapping("The agent's service account.", {
        create: flag('Create it.'),
        name: text("Its name; empty: the release's full name (created) or default."),
        annotations: strings('Annotations of the service account (e.g. a cloud IAM role).'),
      }),
      rbac: mapping("The agent's access to the cluster (docs/deploy.md#the-agents-rbac-rule-by-rule).", {
        create: flag('Create the Roles and bindings.'),
        mode: { enum: ['cluster', 'namespaced'], description: 'cluster: a ClusterRole; namespaced: a Role in each of `namespaces`.' },
        namespaces: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Namespaces of the namespaced mode.' },
      }),
      token: mapping('The bearer token the agent presents to the driver.', {
        value: text("The token: the chart makes a Secret of it. Use --set-file token.value=token."),
        existingSecret: text('A Secret you manage that holds the token; then `value` is not used.'),
        key: text('The key of the token in the Secret.', { minLength: 1 }),
      }),
      config: chartConfigSchema(),
      resources: kube('Resources of the agent container.'),
      podDisruptionBudget: mapping("The agents' disruption budget.", {
        enabled: flag('Create it.'),
        minAvailable: { type: ['integer', 'string'], description: 'Pods kept during voluntary disruptions: a number or a percentage.' },
      }),
      podAnnotations: strings('Annotations of the agent pods.'),
      podLabels: strings('Labels of the agent pods.'),
      nodeSelector: strings('Node selector of the agent pods.'),
      tolerations: { type: 'array', items: { type: 'object' }, description: 'Tolerations of the agent pods.' },
      affinity: kube('Affinity of the agent pods.'),
      extraEnv: objects('Extra environment variables of the agent container.', ['name']),
      extraVolumes: objects('Extra volumes of the agent pods.', ['name']),
      extraVolumeMounts: objects('Extra volume mounts of the agent container.', ['name', 'mountPath']),
      metrics: mapping('Objects for scraping the agents (docs/metrics.md), all off by default.', {
        service: mapping('A Service <fullname>-metrics selecting the agents, port `metrics`.', {
          enabled: flag('Create it.'),
          annotations: strings('Annotations of the Service.'),
        }),
        serviceMonitor: mapping("A monitoring.coreos.com/v1 ServiceMonitor for that Service (needs service.enabled and the Prometheus Operator's CRDs).", {
          enabled: flag('Create it.'),
          interval: text('Scrape interval, a Prometheus duration such as 30s.', { minLength: 1 }),
          labels: strings('Labels of the ServiceMonitor (what your Prometheus selects).'),
        }),
        prometheusRule: mapping('A PrometheusRule with the agent alerts of deploy/observability/agent-alerts.yml.', {
          enabled: flag('Create it.'),
          labels: strings('Labels of the PrometheusRule (what your Prometheus selects).'),
        }),
      }),
      // Helm hands a chart used as a dependency its parent's `global` values.
      global: { type: 'object', description: "Values shared with a parent chart; this chart reads none." },
    },
    required: ['config', 'token', 'image'],
    additionalProperties: false,
  };
}

export function chartValuesSchemaText(): string {
  return `${JSON.stringify(chartValuesSchema(), null, 2)}\n`;
}
