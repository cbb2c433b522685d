/**
 * The agent's manifests against a real kube-apiserver (the one the real-cluster suite uses): every
 * object of both variants and of the rendered chart is created, so the server's own validation
 * judges them, and then the server is asked (SubjectAccessReview) what the agent's service account
 * may do: caching, metrics and operations everywhere with the ClusterRole, only in the watched
 * namespace with the namespaced variant, and never deletecollection, escalate, bind or impersonate.
 * On a machine without kube-apiserver one test says so instead.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import { findClusterBinaries } from '../cluster/binaries.ts';
import { kubeRequest } from '../cluster/http.ts';
import { realKubeApiserver } from '../cluster/real-target.ts';
import type { ClusterTarget, StartedTarget } from '../cluster/target.ts';
import { REQUIRED, render, renderTests } from './helm-chart.ts';
import { describeObject, manifestFiles, type KubeObject } from './kube-objects.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const START_TIMEOUT_MS = 180_000;
const AGENT_USER = 'system:serviceaccount:vendor:vendor-agent';
const AGENT_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:vendor', 'system:authenticated'];

const PLURALS: Record<string, string> = {
  Namespace: 'namespaces',
  Pod: 'pods',
  Service: 'services',
  ServiceAccount: 'serviceaccounts',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Deployment: 'deployments',
  PodDisruptionBudget: 'poddisruptionbudgets',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
};

function collectionPath(o: KubeObject): string {
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const plural = PLURALS[o.kind];
  if (plural === undefined) throw new Error(`no path for ${o.kind}`);
  return o.metadata.namespace === undefined ? `${base}/${plural}` : `${base}/namespaces/${o.metadata.namespace}/${plural}`;
}

function files(...folders: string[]): KubeObject[] {
  return manifestFiles(resolve(ROOT, 'deploy/agent'), ROOT)
    .filter((f) => folders.some((folder) => f.file.startsWith(`deploy/agent/${folder}/`)))
    .flatMap((f) => f.objects);
}

const binaries = findClusterBinaries();
if (!binaries.available) {
  test(`the manifests were not applied to a real API server: ${binaries.reason}`, () => {
    console.warn(`[deploy manifests] not applied to kube-apiserver: ${binaries.reason}`);
    expect(binaries.reason.trim().length).toBeGreaterThan(0);
  });
} else {
  describe('the agent manifests on a real kube-apiserver', () => {
    let started: StartedTarget | undefined;
    const target = (): ClusterTarget => {
      if (started === undefined) throw new Error('kube-apiserver did not start');
      return started.target;
    };
    let servesPolicyV1 = true;

    beforeAll(async () => {
      started = await realKubeApiserver(binaries).start();
      servesPolicyV1 = (await kubeRequest(target(), target().auth.admin, '/apis/policy/v1')).status === 200;
    }, START_TIMEOUT_MS);
    afterAll(() => started?.close(), START_TIMEOUT_MS);

    /** Creates each object; the server's own validation decides. Returns the failures with the server's message. */
    async function create(objects: KubeObject[]): Promise<string[]> {
      const failures: string[] = [];
      // Namespaces first, as kubectl apply -k and helm order them.
      const ordered = [...objects].sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
      for (const original of ordered) {
        // Servers before 1.21 serve PodDisruptionBudget only as policy/v1beta1, with the same spec.
        const o = original.apiVersion === 'policy/v1' && !servesPolicyV1 ? { ...original, apiVersion: 'policy/v1beta1' } : original;
        const res = await kubeRequest(target(), target().auth.admin, `${collectionPath(o)}?fieldManager=vendor-deploy-test`, { method: 'POST', body: o });
        if (res.status !== 201) failures.push(`${describeObject(o)}: ${res.status} ${String(res.body?.message ?? res.text)}`);
      }
      return failures;
    }

    async function allowed(verb: string, resource: string, attributes: Attributes = {}): Promise<boolean> {
      const res = await kubeRequest(target(), target().auth.admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        method: 'POST',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: AGENT_USER, groups: AGENT_GROUPS, resourceAttributes: { verb, resource, group: attributes.group ?? '', ...attributes } },
        },
      });
      if (res.status !== 201) throw new Error(`SubjectAccessReview answered ${res.status}: ${res.text}`);
      return (res.body?.status as { allowed?: boolean } | undefined)?.allowed === true;
    }

    /** RBAC changes reach the authorizer through its informers: ask again until the answer settles. */
    async function settlesTo(expected: boolean, verb: string, resource: string, attributes: Parameters<typeof allowed>[2] = {}): Promise<boolean> {
      let answer = await allowed(verb, resource, attributes);
      for (let i = 0; i < 300 && answer !== expected; i++) {
        await new Promise((r) => setTimeout(r, 100));
        answer = await allowed(verb, resource, attributes);
      }
      return answer;
    }

    type Attributes = { group?: string; namespace?: string; subresource?: string };
    type Check = readonly [verb: string, resource: string, attributes: Attributes];
    const operations = (namespace: string | undefined): Check[] =>
      (
        [
          ['list', 'pods', {}],
          ['watch', 'deployments', { group: 'apps' }],
          ['get', 'secrets', {}],
          ['list', 'rollouts', { group: 'argoproj.io' }],
          ['list', 'pods', { group: 'metrics.k8s.io' }],
          ['create', 'configmaps', {}],
          ['patch', 'deployments', { group: 'apps' }],
          ['update', 'deployments', { group: 'apps' }],
          ['patch', 'deployments', { group: 'apps', subresource: 'scale' }],
          ['delete', 'services', {}],
        ] as Check[]
      ).map(([verb, resource, attrs]) => [verb, resource, { ...attrs, ...(namespace === undefined ? {} : { namespace }) }]);

    const never: Check[] = [
      ['deletecollection', 'pods', { namespace: 'default' }],
      ['escalate', 'clusterroles', { group: 'rbac.authorization.k8s.io' }],
      ['bind', 'clusterroles', { group: 'rbac.authorization.k8s.io' }],
      ['impersonate', 'users', {}],
      ['impersonate', 'serviceaccounts', { namespace: 'default' }],
    ];

    it(
      'accepts every object of the cluster-wide install, and the agent may cache, read metrics and operate everywhere',
      async () => {
        expect(await create(files('base', 'cluster'))).toEqual([]);
        for (const [verb, resource, attrs] of operations(undefined)) {
          expect(await settlesTo(true, verb, resource, attrs), `${verb} ${resource} ${JSON.stringify(attrs)}`).toBe(true);
        }
        for (const [verb, resource, attrs] of operations('default')) expect(await allowed(verb, resource, attrs), `${verb} ${resource} in default`).toBe(true);
        for (const [verb, resource, attrs] of never) expect(await allowed(verb, resource, attrs), `${verb} ${resource}`).toBe(false);
      },
      START_TIMEOUT_MS,
    );

    it(
      'accepts the namespaced variant, which allows the same only in the watched namespace, and zone look-ups in its own',
      async () => {
        const removed = await kubeRequest(target(), target().auth.admin, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/vendor-agent', { method: 'DELETE' });
        expect(removed.status).toBe(200);
        expect(await create([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }, ...files('namespaced')])).toEqual([]);
        expect(await settlesTo(false, 'list', 'pods'), 'list pods in every namespace').toBe(false);
        for (const [verb, resource, attrs] of operations('apps')) expect(await settlesTo(true, verb, resource, attrs), `${verb} ${resource} in apps`).toBe(true);
        for (const [verb, resource, attrs] of operations('default')) expect(await allowed(verb, resource, attrs), `${verb} ${resource} in default`).toBe(false);
        for (const [verb, resource, attrs] of never) expect(await allowed(verb, resource, attrs), `${verb} ${resource}`).toBe(false);
        // Zone computation: get, and only get, on its pod's owners in its own namespace.
        expect(await allowed('get', 'pods', { namespace: 'vendor' })).toBe(true);
        expect(await allowed('get', 'replicasets', { group: 'apps', namespace: 'vendor' })).toBe(true);
        expect(await allowed('get', 'deployments', { group: 'apps', namespace: 'vendor' })).toBe(true);
        expect(await allowed('list', 'pods', { namespace: 'vendor' })).toBe(false);
        expect(await allowed('patch', 'deployments', { group: 'apps', namespace: 'vendor' })).toBe(false);
      },
      START_TIMEOUT_MS,
    );

    it(
      'accepts every object the Helm chart renders with its defaults, and the objects of its `helm test`',
      async () => {
        const release = { Name: 'edge', Namespace: 'edge' };
        expect(await create([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'edge' } }, ...render(REQUIRED, release)])).toEqual([]);
        expect(await create(renderTests(REQUIRED, release))).toEqual([]);
      },
      START_TIMEOUT_MS,
    );
  });
}
