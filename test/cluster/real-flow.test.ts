/**
 * The whole flow against a real kube-apiserver: the control plane as `npm start` runs it (embedded
 * table, driver, and an agent for the kubeconfig given), an account registered and activated over
 * HTTP, the cluster's resources cached and served by the API, a deploy operation applied in the
 * cluster, and a restart that resumes every watch without listing. The API server's audit log is the
 * witness of what the agent asked for (its requests carry the agent's User-Agent; lists, gets and
 * patches are recorded as they complete, watches of this version not reliably, so what the watches
 * bring is checked in the cache instead).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, test, vi } from 'vitest';
import { USER_AGENT } from '../../agent/clusters/client.ts';
import { PLANE_AUTH, PLANE_TOKEN, planeHttp, startPlane, stopAll, stopPlane } from '../support/control-plane-process.ts';
import { findClusterBinaries } from './binaries.ts';
import { type Json, adminKube } from './http.ts';
import { type AuditEvent, type RealCluster, startRealCluster } from './real-server.ts';
import { realClusterTarget } from './real-target.ts';
import type { ClusterTarget } from './target.ts';

const binaries = findClusterBinaries();
const SETTLE = { timeout: 60_000, interval: 250 };
const NAMESPACE = 'shop';

if (!binaries.available) {
  test(`the real-cluster flow did not run: ${binaries.reason}`, () => {
    console.warn(`[real-cluster flow] did not run: ${binaries.reason}`);
    expect(binaries.reason.trim().length).toBeGreaterThan(0);
  });
} else {
  describe('the whole flow against kube-apiserver', () => {
    let cluster: RealCluster;
    let target: ClusterTarget;
    beforeAll(async () => {
      cluster = await startRealCluster({ ...binaries, auditLog: true });
      target = realClusterTarget(cluster, binaries.source);
    }, 180_000);
    afterAll(() => cluster?.close());
    afterEach(stopAll);

    const kube = adminKube(() => target);
    const configMap = (name: string) => kube(`/api/v1/namespaces/${NAMESPACE}/configmaps`, 'POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { tier: 'seed' } }, data: { name } });

    /** `namespace/name` → resourceVersion of every object the cluster lists at `path`. */
    const inCluster = async (path: string): Promise<Map<string, string>> => {
      const list = await kube(path);
      const items = list.items as { metadata: { namespace?: string; name: string; resourceVersion: string } }[];
      return new Map(items.map((i) => [`${i.metadata.namespace ?? ''}/${i.metadata.name}`, i.metadata.resourceVersion]));
    };

    /** The same, as the control plane serves the account's cached resources of `kind`. */
    const inCache = async (url: string, kind: string): Promise<Map<string, string>> => {
      const out = new Map<string, string>();
      let cursor: string | undefined;
      do {
        const page = await planeHttp(`${url}/vendor/accounts/local/resources?kind=${kind}&limit=1000${cursor === undefined ? '' : `&cursor=${cursor}`}`);
        expect(page.status).toBe(200);
        for (const item of page.json.items as { namespace?: string; name: string; resourceVersion: string }[]) out.set(`${item.namespace ?? ''}/${item.name}`, item.resourceVersion);
        cursor = page.json.nextCursor as string | undefined;
      } while (cursor !== undefined);
      return out;
    };

    /** Waits until the cache holds exactly what the cluster holds, for each kind and its list path. */
    const cacheMatchesCluster = (url: string) =>
      vi.waitFor(async () => {
        for (const [kind, path] of [
          ['ConfigMap', '/api/v1/configmaps'],
          ['Namespace', '/api/v1/namespaces'],
          ['Deployment.apps', '/apis/apps/v1/deployments'],
          ['ClusterRole', '/apis/rbac.authorization.k8s.io/v1/clusterroles'],
        ] as const) {
          expect(Object.fromEntries(await inCache(url, kind)), kind).toEqual(Object.fromEntries(await inCluster(path)));
        }
      }, SETTLE);

    /** The agent's completed requests (told apart by its User-Agent) received after `since`. */
    const agentRequests = async (since: string): Promise<AuditEvent[]> =>
      (await cluster.auditEvents()).filter((e) => e.stage === 'ResponseComplete' && e.userAgent?.startsWith(USER_AGENT) === true && e.requestReceivedTimestamp > since);

    it('activates an account, caches and serves the cluster, deploys into it, and resumes after a restart without listing', async () => {
      await kube('/api/v1/namespaces', 'POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
      for (let i = 0; i < 20; i++) await configMap(`seed-${i}`);

      const cwd = mkdtempSync(join(tmpdir(), 'real-flow-'));
      const kubeconfig = await cluster.writeKubeconfig(join(cwd, 'kubeconfig'), 'token');
      writeFileSync(join(cwd, 'vendor-driver.yml'), `${PLANE_AUTH}kubernetes:\n  accounts: []\n`);
      const env = { KUBECONFIG: kubeconfig, VENDOR_DATA_DIR: join(cwd, 'data') };

      // Registered and activated over HTTP: the agent connects to the real server and confirms.
      let plane = await startPlane(cwd, env);
      // PATCH needs a live agent in the account's zone.
      await vi.waitFor(() => expect(plane.output()).toMatch(/\[agent\] .*connected to the driver/), SETTLE);
      expect((await planeHttp(`${plane.url}/vendor/accounts`, 'POST', [{ name: 'local' }])).status).toBe(200);
      expect((await planeHttp(`${plane.url}/vendor/accounts`, 'PATCH', [{ name: 'local', state: 'ACTIVE' }])).status).toBe(200);
      await vi.waitFor(
        async () =>
          expect((await planeHttp(`${plane.url}/vendor/accounts/local`)).json).toMatchObject({
            state: 'ACTIVE',
            agents: [{ agentId: 'local-agent', caching: true }],
            lastAssignmentMsg: expect.stringMatching(new RegExp(`^connected to ${cluster.url} \\(Kubernetes v1\\.20\\.`)),
          }),
        SETTLE,
      );

      // Cached: what the API serves is what the cluster holds, kind by kind, with the same versions.
      await cacheMatchesCluster(plane.url);
      const health = await planeHttp(`${plane.url}/vendor/accounts/local/cache`);
      expect(health.json).toMatchObject({ cachingAgentId: 'local-agent' });
      // 1.20 has no WatchList: the agent asked for one once, was refused, and listed each kind in pages.
      const firstRun = await agentRequests('');
      expect(firstRun.filter((e) => e.verb === 'watch' && e.requestURI.includes('sendInitialEvents=true')).map((e) => e.responseStatus?.code)).toEqual([422]);
      expect(firstRun.some((e) => e.verb === 'list' && e.objectRef?.resource === 'configmaps' && e.requestURI.includes('limit=500'))).toBe(true);

      // A deploy operation through the API, the driver and the agent, applied in the cluster.
      const manifest = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NAMESPACE },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } },
      };
      const submitted = await fetch(`${plane.url}/vendor/accounts/local/operations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PLANE_TOKEN}`, 'content-type': 'application/json', 'Idempotency-Key': 'real-flow-deploy-1' },
        body: JSON.stringify({ action: 'deploy', manifests: [manifest] }),
      });
      expect(submitted.status).toBe(202);
      const { id } = (await submitted.json()) as { id: string };
      expect((await planeHttp(`${plane.url}/vendor/operations/${id}?wait=30`)).json).toMatchObject({ state: 'SUCCEEDED', agentId: 'local-agent', outcomes: [{ result: 'created' }] });
      const web = await kube(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments/web`);
      expect(web).toMatchObject({ spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } } });
      const applied = (await agentRequests('')).filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'deployments' && e.objectRef.name === 'web');
      expect(applied.map((e) => e.responseStatus?.code)).toEqual([201]);
      // ... and the watch brings it into the cache.
      await cacheMatchesCluster(plane.url);

      // A restart of the agent (with the control plane around it); a change made while it is down.
      expect(await stopPlane(plane.child)).toBe(0);
      const restartedAt = new Date().toISOString();
      await configMap('while-down');
      plane = await startPlane(cwd, env);
      await vi.waitFor(
        async () => expect((await planeHttp(`${plane.url}/vendor/accounts/local`)).json).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'local-agent', caching: true }] }),
        SETTLE,
      );
      await cacheMatchesCluster(plane.url);
      await configMap('after-restart');
      await cacheMatchesCluster(plane.url);

      // Resumed: the changes made while it was down and after it came back arrived through watches
      // started from the stored versions; the API server saw no list from the agent.
      expect((await agentRequests(restartedAt)).filter((e) => e.verb === 'list').map((e) => e.requestURI)).toEqual([]);
      // The new agent's own report of its cache says the same: no kind listed.
      const resumed = await vi.waitFor(async () => {
        const h = await planeHttp(`${plane.url}/vendor/accounts/local/cache`);
        expect(String(h.json.reportedAt) > restartedAt).toBe(true);
        return h.json;
      }, SETTLE);
      const kinds = resumed.kinds as { kind: string; relists: number }[];
      expect(kinds.length).toBeGreaterThan(0);
      expect(kinds.filter((k) => k.relists > 0)).toEqual([]);
      expect(await stopPlane(plane.child)).toBe(0);
    }, 300_000);
  });
}
