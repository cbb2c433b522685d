import { ApisApi, CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeConfigFor } from '../target.ts';
import { type Scenario, client } from './kube.ts';

type Resource = { name: string; singularName: string; namespaced: boolean; kind: string; verbs: string[]; shortNames?: string[] };

function resource(list: unknown, name: string): Resource {
  const found = ((list as { resources?: Resource[] }).resources ?? []).find((r) => r.name === name);
  expect(found, `discovery lists ${name}`).toBeDefined();
  return found as Resource;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const discoveryScenarios: Scenario[] = [
  {
    name: 'discovery: /version, /api and /api/v1 describe the core kinds with scope, kind, verbs and short names',
    async run(target) {
      const c = client(target);
      const version = await c.expect(200, '/version');
      expect(version.major).toBe('1');
      expect(version.minor).toMatch(/^\d+\+?$/);
      expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/);

      const api = await c.expect(200, '/api');
      expect(api.kind).toBe('APIVersions');
      expect(api.versions).toEqual(['v1']);

      const core = await c.expect(200, '/api/v1');
      expect(core.kind).toBe('APIResourceList');
      expect(core.groupVersion).toBe('v1');
      expect(resource(core, 'namespaces')).toMatchObject({ namespaced: false, kind: 'Namespace', shortNames: ['ns'] });
      expect(resource(core, 'configmaps')).toMatchObject({ namespaced: true, kind: 'ConfigMap', verbs: ALL_VERBS, shortNames: ['cm'] });
      expect(resource(core, 'pods')).toMatchObject({ namespaced: true, kind: 'Pod', verbs: ALL_VERBS, shortNames: ['po'] });
      // 1.20 leaves singularName empty for built-in kinds; later servers fill it in. Clients derive it from kind when empty.
      expect(['', 'configmap']).toContain(resource(core, 'configmaps').singularName);
      // Subresources are listed beside their resource, with their own verbs.
      expect(resource(core, 'pods/status')).toMatchObject({ namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    },
  },
  {
    name: 'discovery: /apis lists groups with preferred versions and /apis/<group>/<version> their kinds',
    async run(target) {
      const c = client(target);
      const apis = await c.expect(200, '/apis');
      expect(apis.kind).toBe('APIGroupList');
      const groups = apis.groups as { name: string; versions: unknown[]; preferredVersion: unknown }[];
      expect(groups.find((g) => g.name === 'apps')).toEqual({
        name: 'apps',
        versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
      });
      expect(groups.map((g) => g.name)).toEqual(expect.arrayContaining(['apps', 'batch', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io']));

      const apps = await c.expect(200, '/apis/apps/v1');
      expect(apps).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1' });
      expect(resource(apps, 'deployments')).toMatchObject({ namespaced: true, kind: 'Deployment', verbs: ALL_VERBS, shortNames: ['deploy'] });
      const rbac = await c.expect(200, '/apis/rbac.authorization.k8s.io/v1');
      expect(resource(rbac, 'clusterroles')).toMatchObject({ namespaced: false, kind: 'ClusterRole' });

      await c.expect(404, '/apis/no.such.group/v1');
    },
  },
  {
    name: 'discovery: @kubernetes/client-node reads versions, groups and resources',
    async run(target) {
      const kc = kubeConfigFor(target, target.auth.admin);
      const version = await kc.makeApiClient(VersionApi).getCode();
      expect(version.major).toBe('1');
      const groups = await kc.makeApiClient(ApisApi).getAPIVersions();
      expect(groups.groups.map((g) => g.name)).toContain('apps');
      const core = await kc.makeApiClient(CoreV1Api).getAPIResources();
      expect(core.resources.find((r) => r.name === 'services')).toMatchObject({ namespaced: true, kind: 'Service' });
    },
  },
];
