import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { captureLogger } from '../../test/capture-log.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { resolveZone, type ZoneDeps } from './zone.ts';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

let api: Server | undefined;
const requests: string[] = [];

afterEach(async () => {
  requests.length = 0;
  if (api !== undefined) {
    api.closeAllConnections();
    await new Promise((r) => api!.close(r));
    api = undefined;
  }
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const owner = (kind: string, name: string) => ({ apiVersion: 'apps/v1', kind, name, uid: `${name}-uid`, controller: true });

/** A loopback stand-in for the API server answering the GETs of the owner look-up. */
async function apiServer(objects: Record<string, unknown>, route?: Route): Promise<KubeConfig> {
  api = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (route !== undefined) return route(req, res);
    const object = objects[req.url ?? ''];
    if (object === undefined) return json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    json(res, 200, object);
  });
  await new Promise<void>((resolve) => api!.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'sa', token: 'service-account-token' }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'sa' }],
    currentContext: 'in-cluster',
  });
  return kc;
}

function deps(overrides: Partial<ZoneDeps>): { deps: ZoneDeps; logs: { level: number; msg: string; reason?: string }[] } {
  const { log: logger, lines } = captureLogger();
  return {
    logs: lines as { level: number; msg: string; reason?: string }[],
    deps: { env: {}, hostname: 'agent-7d9f-x2x4q', logger, clock: systemClock, inCluster: async () => undefined, namespaceFile: '/nonexistent', ...overrides },
  };
}

const pod = (owners: unknown[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'agent-7d9f-x2x4q', namespace: 'ops', ownerReferences: owners } });

describe('zone id', () => {
  it('comes from the environment variables the manifests set', async () => {
    const { deps: d, logs } = deps({ env: { VENDOR_DEPLOYMENT_NAME: 'vendor-agent', POD_NAMESPACE: 'ops' } });
    expect(await resolveZone(d)).toEqual({ zoneId: 'vendor-agent_ops', source: 'environment' });
    expect(logs.map((l) => l.msg)).toEqual(['zone id from the environment']);
  });

  it('follows pod -> replicaset -> deployment through the API', async () => {
    const kc = await apiServer({
      '/api/v1/namespaces/ops/pods/agent-7d9f-x2x4q': pod([owner('ReplicaSet', 'vendor-agent-7d9f')]),
      '/apis/apps/v1/namespaces/ops/replicasets/vendor-agent-7d9f': {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'vendor-agent-7d9f', namespace: 'ops', ownerReferences: [owner('Deployment', 'vendor-agent')] },
      },
    });
    const { deps: d, logs } = deps({ env: { POD_NAMESPACE: 'ops' }, inCluster: async () => kc });
    expect(await resolveZone(d)).toEqual({ zoneId: 'vendor-agent_ops', source: 'pod owners' });
    expect(requests).toEqual([
      'GET /api/v1/namespaces/ops/pods/agent-7d9f-x2x4q',
      'GET /apis/apps/v1/namespaces/ops/replicasets/vendor-agent-7d9f',
    ]);
    expect(logs.map((l) => l.msg)).toEqual(['zone id from the owners of the pod']);
  });

  it('reads the namespace from the service account and the pod name from POD_NAME', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-'));
    writeFileSync(join(dir, 'namespace'), 'tools\n');
    const kc = await apiServer({ '/api/v1/namespaces/tools/pods/agent-0': pod([owner('StatefulSet', 'agent')]) });
    const { deps: d } = deps({ env: { POD_NAME: 'agent-0' }, namespaceFile: join(dir, 'namespace'), inCluster: async () => kc });
    expect(await resolveZone(d)).toEqual({ zoneId: 'agent_tools', source: 'pod owners' });
  });

  it('falls back to the host name, saying why, when the API refuses', async () => {
    const kc = await apiServer({}, (_req, res) => json(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403 }));
    const { deps: d, logs } = deps({ env: { POD_NAMESPACE: 'ops' }, inCluster: async () => kc });
    expect(await resolveZone(d)).toEqual({ zoneId: 'agent-7d9f-x2x4q', source: 'host name' });
    expect(logs.at(-1)?.reason).toBe(
      'looking up the owners of pod ops/agent-7d9f-x2x4q failed: forbidden: the service account needs get on pods and on apps replicasets in its namespace',
    );
  });

  it('falls back to the host name for a pod without a controller', async () => {
    const kc = await apiServer({ '/api/v1/namespaces/ops/pods/agent-7d9f-x2x4q': pod([]) });
    const { deps: d, logs } = deps({ env: { POD_NAMESPACE: 'ops' }, inCluster: async () => kc });
    expect((await resolveZone(d)).source).toBe('host name');
    expect(logs.at(-1)?.reason).toContain('has no controller');
  });

  it('falls back to the host name when the API server does not answer in time', async () => {
    const kc = await apiServer({}, () => {});
    const clock = new ManualClock();
    const { deps: d, logs } = deps({ env: { POD_NAMESPACE: 'ops' }, inCluster: async () => kc, clock, timeoutMs: 5000 });
    const zone = resolveZone(d);
    while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(5000);
    expect(await zone).toEqual({ zoneId: 'agent-7d9f-x2x4q', source: 'host name' });
    expect(logs.at(-1)?.reason).toContain('did not answer in time');
  });

  it('outside a cluster, is the host name', async () => {
    const { deps: d, logs } = deps({ env: { VENDOR_DEPLOYMENT_NAME: 'vendor-agent' } });
    expect(await resolveZone(d)).toEqual({ zoneId: 'agent-7d9f-x2x4q', source: 'host name' });
    expect(logs.at(-1)).toMatchObject({ level: 40, reason: 'not running in a Kubernetes cluster' });
  });
});
