/**
 * The Helm chart (deploy/helm/vendor-agent) as the tests read it: its files, its defaults, and its
 * templates rendered with test/deploy/helm-template.ts as `helm template` would, split into what an
 * install creates and what `helm test` creates (the objects annotated `helm.sh/hook: test`).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { Renderer } from './helm-template.ts';
import { parseObjects, type KubeObject } from './kube-objects.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CHART = resolve(ROOT, 'deploy/helm/vendor-agent');
export const TEMPLATES = join(CHART, 'templates');

export type Values = Record<string, unknown>;

export const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { apiVersion: string; name: string; version: string; appVersion: string };
export const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Values;

/** Template files relative to templates/, the tests/ folder included, as Helm loads them. */
export const templateFiles: string[] = (function list(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => (statSync(join(dir, name)).isDirectory() ? list(join(dir, name)) : [relative(TEMPLATES, join(dir, name))]));
})(TEMPLATES);

/** Helm's coalescing of user values over the chart's: maps merge, a null removes a key, everything else is replaced. */
export function merged(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof over !== 'object' || over === null || Array.isArray(over)) {
    return over === undefined ? base : over;
  }
  const out: Values = { ...(base as Values) };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else out[k] = merged(out[k], v);
  }
  return out;
}

const isTestHook = (o: KubeObject) => o.metadata.annotations?.['helm.sh/hook'] === 'test';

function rendererFor(overrides: Values, release: { Name: string; Namespace: string }): Renderer {
  const renderer = new Renderer({
    Values: merged(defaults, overrides),
    Release: { ...release, Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  });
  for (const file of templateFiles.filter((f) => f.endsWith('.tpl'))) renderer.load(readFileSync(join(TEMPLATES, file), 'utf8'));
  return renderer;
}

/** `helm template vendor-agent deploy/helm/vendor-agent -n vendor --set ...`, parsed into objects. */
function renderAll(overrides: Values, release: { Name: string; Namespace: string }): KubeObject[] {
  const renderer = rendererFor(overrides, release);
  return templateFiles
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseObjects(renderer.render(readFileSync(join(TEMPLATES, f), 'utf8')), f));
}

const DEFAULT_RELEASE = { Name: 'vendor-agent', Namespace: 'vendor' };

/** What `helm install` creates. */
export function render(overrides: Values, release = DEFAULT_RELEASE): KubeObject[] {
  return renderAll(overrides, release).filter((o) => !isTestHook(o));
}

/** What `helm test` creates. */
export function renderTests(overrides: Values, release = DEFAULT_RELEASE): KubeObject[] {
  return renderAll(overrides, release).filter(isTestHook);
}

/** What `helm install` prints after installing (templates/NOTES.txt). */
export function renderNotes(overrides: Values, release = DEFAULT_RELEASE): string {
  return rendererFor(overrides, release).render(readFileSync(join(TEMPLATES, 'NOTES.txt'), 'utf8'));
}

/** The least a user gives: the driver address and a token. */
export const REQUIRED = {
  config: { driver: { grpc: 'grpc.vendor.example.com:443' } },
  token: { value: 'tok3n-from-the-control-plane-0123456789' },
};
