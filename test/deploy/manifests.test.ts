/**
 * The agent's plain manifests (deploy/agent): every file parses into objects that are valid for their
 * kind and version and refer to each other correctly; the vendor-agent.yml they carry passes the
 * agent's own validator and agrees with the Deployment (ports, paths, token file, zone variables);
 * and `kubectl kustomize` builds each variant.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, test } from 'vitest';
import { ZONE_ENV, resolveZone } from '../../agent/zone/zone.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { silentLogger } from '../../shared/log.ts';
import { agentConfigOf, checkInstall, one, type Container } from './install-checks.ts';
import { at, describeObject, manifestFiles, problems, type KubeObject } from './kube-objects.ts';
import { kubectlAvailability, kustomize } from './kubectl.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const AGENT = resolve(ROOT, 'deploy/agent');
/** The namespace the namespaced variant watches: the operator's own, not created by the install. */
const WATCHED = ['apps'];

describe('deploy/agent: every manifest file', () => {
  const files = manifestFiles(AGENT, ROOT);

  it('parses into objects of a kind and version the API serves, with the fields each requires', () => {
    expect(files.length).toBeGreaterThan(5);
    for (const { file, objects } of files) {
      expect(objects.length, `${file} holds no object`).toBeGreaterThan(0);
      // Checked in the company of every object of the variant, so references resolve.
      const variant = file.split('/')[2];
      const company = files.filter((f) => f.file.includes('/base/') || f.file.includes(`/${variant}/`)).flatMap((f) => f.objects);
      expect(problems(company, WATCHED).filter((p) => objects.some((o) => p.startsWith(describeObject(o)))), file).toEqual([]);
    }
  });

  it('names the problems of an object that is not valid', () => {
    const bad = [
      { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'Agent', namespace: 'vendor' }, spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'agent', livenessProbe: { httpGet: { path: '/livez', port: 'health' } } }] } } } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'x' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'missing' }, subjects: [{ kind: 'ServiceAccount', name: 'nobody', namespace: 'vendor' }] },
    ] as KubeObject[];
    const found = problems(bad).join('\n');
    for (const expected of ['apiVersion apps/v1beta1 does not serve Deployment', 'metadata.name "Agent"', 'spec.selector.matchLabels', 'containers[0].image is required', 'livenessProbe.httpGet.port health', 'ClusterRole missing is not among', 'service account vendor/nobody']) {
      expect(found).toContain(expected);
    }
  });
});

describe('deploy/agent: the base install with its cluster-wide variant, as files', () => {
  const objects = manifestFiles(AGENT, ROOT)
    .filter((f) => f.file.includes('/base/') || f.file.includes('/cluster/'))
    .flatMap((f) => f.objects);

  it('is a complete, consistent install whose vendor-agent.yml the agent accepts', () => checkInstall(objects));

  it('sets the zone variables the agent reads, so the zone is <deploymentName>_<namespace>', async () => {
    const deployment = one(objects, 'Deployment');
    const env = (at(deployment, 'spec.template.spec.containers') as Container[])[0]!.env;
    const byName = new Map(env.map((e) => [e.name, e]));
    expect(byName.get(ZONE_ENV.deploymentName)?.value).toBe(deployment.metadata.name);
    expect(byName.get(ZONE_ENV.namespace)?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(byName.get(ZONE_ENV.podName)?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    // What the kubelet would put into the environment of a pod of this Deployment:
    const podEnv = { [ZONE_ENV.deploymentName]: deployment.metadata.name, [ZONE_ENV.namespace]: deployment.metadata.namespace!, [ZONE_ENV.podName]: 'vendor-agent-7d9f-abcde' };
    const zone = await resolveZone({ env: podEnv, hostname: 'vendor-agent-7d9f-abcde', logger: silentLogger(), clock: new ManualClock(0), inCluster: async () => undefined });
    expect(zone).toEqual({ zoneId: 'vendor-agent_vendor', source: 'environment' });
  });

  it('passes `npm run agent -- validate` (the agent CLI) on the ConfigMap file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vendor-agent-config-'));
    try {
      const file = join(dir, 'vendor-agent.yml');
      writeFileSync(file, agentConfigOf(objects).text);
      const { code, stdout } = await new Promise<{ code: number; stdout: string }>((done) =>
        execFile(process.execPath, ['agent/main.ts', 'validate', file], { cwd: ROOT, timeout: 30_000 }, (error, out) =>
          done({ code: error === null ? 0 : Number(error.code), stdout: out }),
        ),
      );
      expect(code, stdout).toBe(0);
      expect(stdout).toContain('valid');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const kubectl = kubectlAvailability();
if (!kubectl.available) {
  test(`kubectl kustomize did not run: ${kubectl.reason}`, () => {
    console.warn(`[deploy manifests] kubectl kustomize did not run: ${kubectl.reason}`);
    expect(kubectl.reason.trim().length).toBeGreaterThan(0);
  });
} else {
  describe(`kubectl kustomize (${kubectl.version})`, () => {
    it('builds deploy/agent/cluster: the install with a ClusterRole', () => {
      const objects = kustomize(join(AGENT, 'cluster'));
      checkInstall(objects);
      expect(objects.map((o) => o.kind).sort()).toEqual(
        ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'Namespace', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Secret', 'ServiceAccount'].sort(),
      );
    });

    it('builds deploy/agent/namespaced: Roles in the watched namespaces only, for an account restricted to them', () => {
      const objects = kustomize(join(AGENT, 'namespaced'));
      checkInstall(objects, WATCHED);
      expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
      const { config } = agentConfigOf(objects);
      const granted = objects.filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'vendor-agent').map((o) => o.metadata.namespace);
      for (const account of config.kubernetes.accounts) {
        expect(account.onlyNamespacedResources, `${account.name} must not read cluster-scoped kinds`).toBe(true);
        expect([...account.namespaces].sort()).toEqual([...granted].sort());
      }
      // The ConfigMap keeps its name, so the mounted file is replaced in place and reloaded.
      expect(one(objects, 'ConfigMap').metadata.name).toBe('vendor-agent-config');
    });

    describe('the overlay of docs/deploy.md', () => {
      const dir = mkdtempSync(join(tmpdir(), 'vendor-agent-overlay-'));
      afterAll(() => rmSync(dir, { recursive: true, force: true }));

      it('replaces the token, the configuration and the image, and the result is still valid', () => {
        // The docs put the overlay beside the checkout, named vendor-agent.
        symlinkSync(ROOT, join(dir, 'vendor-agent'));
        const overlay = join(dir, 'my-agent');
        const blocks = docsBlocks();
        require_(blocks, 'kustomization.yaml');
        for (const [name, text] of blocks) writeTo(overlay, name, text);
        writeTo(overlay, 'token', 'tok3n-from-the-control-plane-0123456789');
        const objects = kustomize(overlay);
        checkInstall(objects);
        expect(one(objects, 'Secret').data).toEqual({ token: Buffer.from('tok3n-from-the-control-plane-0123456789').toString('base64') });
        expect(agentConfigOf(objects).text).toBe(blocks.get('vendor-agent.yml'));
        const image = (at(one(objects, 'Deployment'), 'spec.template.spec.containers') as { image: string }[])[0]!.image;
        expect(image).toMatch(/^123456789012\.dkr\.ecr\.eu-west-1\.amazonaws\.com\/vendor-agent:0\.1\.0$/);
      });
    });
  });
}

/** The files docs/deploy.md tells the reader to write for their overlay: blocks marked `<!-- overlay: NAME -->`. */
function docsBlocks(): Map<string, string> {
  const docs = readFileSync(resolve(ROOT, 'docs/deploy.md'), 'utf8');
  const blocks = new Map<string, string>();
  for (const match of docs.matchAll(/<!-- overlay: (\S+) -->\s*\n```\w*\n([\s\S]*?)```/g)) blocks.set(match[1]!, match[2]!);
  return blocks;
}

function require_(blocks: Map<string, string>, name: string): void {
  if (!blocks.has(name)) throw new Error(`docs/deploy.md has no block marked <!-- overlay: ${name} -->`);
}

function writeTo(dir: string, name: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), text);
}
