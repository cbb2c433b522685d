/**
 * The Helm chart (deploy/helm/vendor-agent), checked without the helm binary: every `.Values` path
 * its templates use exists in values.yaml; the vendor-agent.yml it renders from `config` (toYaml, as
 * the ConfigMap template does) passes the agent's validator; and the chart rendered with its
 * defaults and with the namespaced RBAC mode gives a valid install equal in substance to the plain
 * manifests.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../agent/config/load.ts';
import { Renderer, RenderFailure, TemplateError, valuesPaths } from './helm-template.ts';
import { agentConfigOf, checkInstall, one, type Container } from './install-checks.ts';
import { at, manifestFiles, parseObjects, problems, type KubeObject } from './kube-objects.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CHART = resolve(ROOT, 'deploy/helm/vendor-agent');
const TEMPLATES = join(CHART, 'templates');
const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { apiVersion: string; name: string; version: string; appVersion: string };
const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const templateFiles = readdirSync(TEMPLATES).sort();

type Values = Record<string, unknown>;

/** Helm's coalescing of user values over the chart's: maps merge, everything else is replaced. */
function merged(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof over !== 'object' || over === null || Array.isArray(over)) {
    return over === undefined ? base : over;
  }
  const out: Values = { ...(base as Values) };
  for (const [k, v] of Object.entries(over)) out[k] = merged(out[k], v);
  return out;
}

/** `helm template vendor-agent deploy/helm/vendor-agent -n vendor --set ...`, parsed into objects. */
function render(overrides: Values, release = { Name: 'vendor-agent', Namespace: 'vendor' }): KubeObject[] {
  const renderer = new Renderer({
    Values: merged(defaults, overrides),
    Release: { ...release, Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  });
  for (const file of templateFiles.filter((f) => f.endsWith('.tpl'))) renderer.load(readFileSync(join(TEMPLATES, file), 'utf8'));
  return templateFiles
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseObjects(renderer.render(readFileSync(join(TEMPLATES, f), 'utf8')), f));
}

const TOKEN = { token: { value: 'tok3n-from-the-control-plane-0123456789' } };

describe('deploy/helm/vendor-agent', () => {
  it('is a v2 chart whose appVersion is the project version', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'vendor-agent', appVersion: pkg.version });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('uses only .Values paths that values.yaml defines', () => {
    const missing: string[] = [];
    let count = 0;
    for (const file of templateFiles) {
      for (const path of valuesPaths(readFileSync(join(TEMPLATES, file), 'utf8'))) {
        count++;
        let node: unknown = defaults;
        for (const key of path.split('.')) {
          if (typeof node !== 'object' || node === null || !(key in node)) {
            missing.push(`${file}: .Values.${path}`);
            break;
          }
          node = (node as Values)[key];
        }
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it('renders vendor-agent.yml from `config` (toYaml) into a file the agent accepts, with no warning', () => {
    const text = stringify(defaults.config, { sortMapEntries: true });
    const result = parseConfig(text, 'values.yaml: config');
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.config?.server.host).toBe('0.0.0.0');
    const rendered = (one(render(TOKEN), 'ConfigMap').data as Record<string, string>)['vendor-agent.yml'];
    expect(parse(rendered!)).toEqual(defaults.config);
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
    const objects = render({ token: { existingSecret: 'agent-token', key: 'value' } });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const volumes = at(one(objects, 'Deployment'), 'spec.template.spec.volumes') as { name: string; secret?: { secretName: string; items: unknown } }[];
    expect(volumes.find((v) => v.name === 'token')?.secret).toMatchObject({ secretName: 'agent-token', items: [{ key: 'value', path: 'token' }] });
  });

  it('stops with a clear message for values that cannot work', () => {
    expect(() => render({})).toThrow(new RenderFailure('set token.value to an agent token of the control plane, or token.existingSecret'));
    expect(() => render({ ...TOKEN, rbac: { mode: 'namespaced' } })).toThrow(/rbac.mode namespaced needs rbac.namespaces/);
    expect(() => render({ ...TOKEN, rbac: { mode: 'everything' } })).toThrow(/rbac.mode must be cluster or namespaced/);
  });

  it('is rendered by a renderer that refuses what it does not know', () => {
    const renderer = new Renderer({ Values: {} });
    expect(() => renderer.render('{{ .Values.x | lower }}')).toThrow(new TemplateError('function lower is not supported'));
    expect(() => renderer.render('{{ if .Values.x }}open')).toThrow(/missing \{\{ end \}\}/);
    expect(renderer.render('a  {{- "b" -}}  c {{/* note */}}{{ with .Values.none }}x{{ else }}y{{ end }}')).toBe('abc y');
  });
});
