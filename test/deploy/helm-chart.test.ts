/**
 * The Helm chart (deploy/helm/vendor-agent), checked without the helm binary (docs/testing.md says
 * why): every `.Values` path its templates use exists in values.yaml or values.schema.json; the
 * vendor-agent.yml it renders from `config` (toYaml, as the ConfigMap template does) passes the
 * agent's validator; the chart rendered with its defaults and with the namespaced RBAC mode gives a
 * valid install equal in substance to the plain manifests; and its `helm test` pod, run as written
 * against a real health server, passes when the agents are ready and fails when they are not.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../agent/config/load.ts';
import { Readiness, startHealthServer } from '../../agent/observability/health.ts';
import { createSecretResolver } from '../../agent/secrets/index.ts';
import { silentLogger } from '../../shared/log.ts';
import { CHART, REQUIRED, ROOT, TEMPLATES, chart, defaults, merged, render, renderNotes, renderTests, templateFiles, type Values } from './helm-chart.ts';
import { Renderer, RenderFailure, TemplateError, valuesPaths } from './helm-template.ts';
import { agentConfigOf, checkInstall, one, type Container } from './install-checks.ts';
import { at, manifestFiles, problems, type KubeObject } from './kube-objects.ts';

const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Values;

/** Whether values.schema.json declares a path of values (`properties` all the way down). */
function declared(path: string): boolean {
  let node: unknown = schema;
  for (const key of path.split('.')) {
    const properties = (node as { properties?: Values } | undefined)?.properties;
    if (properties === undefined || !(key in properties)) return false;
    node = properties[key];
  }
  return true;
}

const TOKEN = REQUIRED;

describe('deploy/helm/vendor-agent', () => {
  it('is a v2 chart whose appVersion is the project version', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'vendor-agent', appVersion: pkg.version });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('uses only .Values paths that values.yaml defines or, for values without a default, values.schema.json declares', () => {
    const missing: string[] = [];
    let count = 0;
    for (const file of templateFiles) {
      for (const path of valuesPaths(readFileSync(join(TEMPLATES, file), 'utf8'))) {
        count++;
        let node: unknown = defaults;
        for (const key of path.split('.')) {
          if (typeof node !== 'object' || node === null || !(key in node)) {
            if (!declared(path)) missing.push(`${file}: .Values.${path}`);
            break;
          }
          node = (node as Values)[key];
        }
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it('has no placeholder driver address: values.yaml leaves config.driver.grpc to the user', () => {
    expect(at(defaults, 'config.driver')).toBeDefined();
    expect(at(defaults, 'config.driver.grpc')).toBeUndefined();
  });

  it('renders vendor-agent.yml from `config` (toYaml) into a file the agent accepts, with no warning', () => {
    const config = merged(defaults.config, REQUIRED.config);
    const text = stringify(config, { sortMapEntries: true });
    const result = parseConfig(text, 'values.yaml: config');
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.config?.server.host).toBe('0.0.0.0');
    const rendered = (one(render(TOKEN), 'ConfigMap').data as Record<string, string>)['vendor-agent.yml'];
    expect(parse(rendered!)).toEqual(config);
  });

  it('renders, with its defaults and a token, the same install as the plain manifests', () => {
    const objects = render(TOKEN);
    checkInstall(objects, ['vendor']);
    const plain = manifestFiles(resolve(ROOT, 'deploy/agent'), ROOT)
      .filter((f) => f.file.includes('/base/') || f.file.includes('/cluster/'))
      .flatMap((f) => f.objects);
    // The namespace is Helm's to create (--create-namespace); every other object is the same.
    const names = (list: KubeObject[]) => list.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
    expect(names(objects)).toEqual(names(plain.filter((o) => o.kind !== 'Namespace')));
    for (const kind of ['ClusterRole', 'Role']) expect(one(objects, kind).rules, kind).toEqual(one(plain, kind).rules);
    expect(agentConfigOf(objects).config).toEqual(agentConfigOf(plain).config);
    const containerOf = (list: KubeObject[]) => (at(one(list, 'Deployment'), 'spec.template.spec.containers') as Record<string, unknown>[])[0]!;
    const chartContainer = containerOf(objects);
    const plainContainer = containerOf(plain);
    for (const key of ['args', 'env', 'ports', 'startupProbe', 'livenessProbe', 'readinessProbe', 'resources', 'securityContext', 'volumeMounts']) {
      expect(chartContainer[key], key).toEqual(plainContainer[key]);
    }
    expect(at(one(objects, 'Deployment'), 'spec.template.spec.securityContext')).toEqual(at(one(plain, 'Deployment'), 'spec.template.spec.securityContext'));
  });

  it('names the zone after the release: the Deployment name and VENDOR_DEPLOYMENT_NAME follow it', () => {
    const objects = render(TOKEN, { Name: 'edge', Namespace: 'ops' });
    expect(problems(objects, ['ops'])).toEqual([]);
    const deployment = one(objects, 'Deployment');
    expect(deployment.metadata).toMatchObject({ name: 'edge-vendor-agent', namespace: 'ops' });
    const env = (at(deployment, 'spec.template.spec.containers') as Container[])[0]!.env;
    expect(env.find((e) => e.name === 'VENDOR_DEPLOYMENT_NAME')?.value).toBe('edge-vendor-agent');
  });

  it('in namespaced mode grants Roles in the listed namespaces and no ClusterRole', () => {
    const objects = render({ ...TOKEN, rbac: { mode: 'namespaced', namespaces: ['apps', 'web'] } });
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    expect(
      objects
        .filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'vendor-agent')
        .map((o) => o.metadata.namespace)
        .sort(),
    ).toEqual(['apps', 'web']);
    expect(problems(objects, ['vendor', 'apps', 'web'])).toEqual([]);
  });

  it('uses a Secret the operator manages when token.existingSecret is set', () => {
    const objects = render({ config: REQUIRED.config, token: { existingSecret: 'agent-token', key: 'value' } });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const volumes = at(one(objects, 'Deployment'), 'spec.template.spec.volumes') as { name: string; secret?: { secretName: string; items: unknown } }[];
    expect(volumes.find((v) => v.name === 'token')?.secret).toMatchObject({ secretName: 'agent-token', items: [{ key: 'value', path: 'token' }] });
  });

  it('stops with a clear message for values that cannot work', () => {
    expect(() => render({ config: REQUIRED.config })).toThrow(new RenderFailure('set token.value to an agent token of the control plane, or token.existingSecret'));
    expect(() => render({ token: REQUIRED.token })).toThrow(
      new RenderFailure("set config.driver.grpc to the driver's gRPC endpoint (host:port): the grpc output of sst deploy"),
    );
    expect(() => render({ ...TOKEN, rbac: { mode: 'namespaced' } })).toThrow(/rbac.mode namespaced needs rbac.namespaces/);
    expect(() => render({ ...TOKEN, rbac: { mode: 'everything' } })).toThrow(/rbac.mode must be cluster or namespaced/);
  });

  it('prints, after installing, the zone, the driver address and the helm test command', () => {
    const notes = renderNotes(TOKEN, { Name: 'edge', Namespace: 'ops' });
    expect(notes).toContain('zone edge-vendor-agent_ops');
    expect(notes).toContain('connected to the driver at grpc.vendor.example.com:443');
    expect(notes).toContain('helm test edge -n ops --logs');
  });

  it('`helm test` checks every agent pod through a headless Service that also lists pods not ready', () => {
    const tests = renderTests(TOKEN, { Name: 'edge', Namespace: 'ops' });
    expect(tests.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      'Pod ops/edge-vendor-agent-test-readyz',
      'Service ops/edge-vendor-agent-test-readyz',
    ]);
    const deployment = one(render(TOKEN, { Name: 'edge', Namespace: 'ops' }), 'Deployment');
    const service = one(tests, 'Service');
    // The Service exists before the pod that asks it (lower weight first).
    expect(Number(service.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(Number(one(tests, 'Pod').metadata.annotations?.['helm.sh/hook-weight']));
    expect(at(service, 'spec')).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true, ports: [{ port: 8082, targetPort: 'health' }] });
    expect(at(service, 'spec.selector')).toEqual(at(deployment, 'spec.selector.matchLabels'));
    const agent = (at(deployment, 'spec.template.spec.containers') as (Container & { image: string })[])[0]!;
    expect(agent.ports.find((p) => p.name === 'health')?.containerPort).toBe(8082);
    const pod = one(tests, 'Pod');
    const container = (at(pod, 'spec.containers') as { image: string; env: { name: string; value: string }[]; command: string[]; securityContext: object }[])[0]!;
    expect(at(pod, 'spec.restartPolicy')).toBe('Never');
    expect(container.image).toBe(agent.image);
    expect(container.securityContext).toEqual(agent.securityContext);
    expect(container.env.find((e) => e.name === 'AGENTS')?.value).toBe('edge-vendor-agent-test-readyz.ops.svc');
    expect(container.command.slice(0, 2)).toEqual(['node', '-e']);
  });

  it('`helm test` passes against ready agents and fails, printing their /readyz, against one that is not', async () => {
    const pod = one(renderTests({ ...TOKEN, config: { ...REQUIRED.config, server: { port: 0 } } }), 'Pod');
    const container = (at(pod, 'spec.containers') as { command: string[]; env: { name: string; value: string }[] }[])[0]!;
    const secrets = createSecretResolver(undefined, { logger: silentLogger(), env: {} });
    const readiness = new Readiness();
    let connected = true;
    readiness.set('config', () => ({ ok: true, detail: 'loaded' }));
    readiness.set('driver', () => ({ ok: connected, detail: connected ? 'connected' : 'not connected to the driver' }));
    const server = await startHealthServer({ ...parseConfig('', 'empty.yml').config!.server, host: '127.0.0.1', port: 0 }, readiness, secrets);
    // The pod's own command, with the agents' address replaced by this machine's health server.
    const run = () =>
      new Promise<{ code: number | null; out: string }>((done) => {
        const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
        const child = execFile(container.command[0] === 'node' ? process.execPath : container.command[0]!, container.command.slice(1), {
          env: { ...env, AGENTS: '127.0.0.1', PORT: String(server.port), WAIT_SECONDS: '0' },
        });
        let out = '';
        child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => done({ code, out }));
      });
    try {
      const ready = await run();
      expect(ready.out).toContain('ready 127.0.0.1: 200');
      expect(ready.code).toBe(0);
      connected = false;
      const notReady = await run();
      expect(notReady.out).toContain('NOT READY 127.0.0.1: 503');
      expect(notReady.out).toContain('not connected to the driver');
      expect(notReady.code).toBe(1);
    } finally {
      await server.close();
      secrets.close();
    }
  });

  it('is rendered by a renderer that refuses what it does not know', () => {
    const renderer = new Renderer({ Values: {} });
    expect(() => renderer.render('{{ .Values.x | lower }}')).toThrow(new TemplateError('function lower is not supported'));
    expect(() => renderer.render('{{ if .Values.x }}open')).toThrow(/missing \{\{ end \}\}/);
    expect(renderer.render('a  {{- "b" -}}  c {{/* note */}}{{ with .Values.none }}x{{ else }}y{{ end }}')).toBe('abc y');
  });
});
