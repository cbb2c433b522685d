import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { operationMessage } from '../../shared/operations/message.ts';
import type { OperationRequest } from '../../shared/operations/request.ts';
import type { AccountRestrictions } from '../../shared/operations/rules.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import type { Operation__Output } from '../../shared/protocol/messages.ts';
import type { TestApiServer } from '../../test/kube/index.ts';
import { startKubeCluster } from '../../test/support/kube-cluster.ts';
import type { ClusterClient, RetrySettings } from '../clusters/index.ts';
import { ResourceDiscovery } from './resource-discovery.ts';
import { executeOperation } from './execute.ts';
import { GUARD_ANNOTATION } from './guarded.ts';
import { FIELD_MANAGER } from './kube.ts';

const retries: RetrySettings = { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: false, retryableErrors: ['timeout', 'deadline exceeded'] };

let kube: TestApiServer;
let cluster: ClusterClient;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ kube, cluster, close } = await startKubeCluster({ deploymentController: true }, retries));
  kube.store.ensureNamespace('shop');
});
afterAll(() => close());
afterEach(() => {
  kube.faults.clear();
  kube.requests.clear();
});

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
let n = 0;

/** The operation as the agent receives it: through the real codec. */
function wire(request: OperationRequest, id = `op-${n++}`, timeoutMs = 0): Operation__Output {
  const bytes = connect.responseSerialize({ seq: 1, operation: operationMessage(id, 'prod', 1, timeoutMs, request) });
  return connect.responseDeserialize(bytes).operation as Operation__Output;
}

function run(op: Operation__Output, restrictions: AccountRestrictions = {}, deadline = Infinity) {
  return executeOperation({ operationId: op.operationId, cluster, discovery: new ResourceDiscovery(cluster, () => Date.now()), restrictions, clock: systemClock, signal: new AbortController().signal, deadline }, op);
}

const deployment = (name: string, image = 'nginx:1', namespace?: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } } },
});
const ref = (name: string, namespace = 'shop') => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
const getDeployment = (name: string, namespace = 'shop') => kube.store.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });

describe('deploy', () => {
  it('applies every manifest with the agent field manager, namespaces first, and applying again changes nothing', async () => {
    const manifests = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'fresh' }, data: { a: '1' } },
      deployment('web', 'nginx:1', 'fresh'),
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } },
    ];
    const first = await run(wire({ action: 'deploy', manifests, forceConflicts: false }));
    expect(first.ok).toBe(true);
    expect(first.outcomes.map((o) => [o.index, o.kind, o.result, o.code])).toEqual([
      [0, 'ConfigMap', 'created', 201],
      [1, 'Deployment', 'created', 201],
      [2, 'Namespace', 'created', 201],
    ]);
    const web = getDeployment('web', 'fresh');
    expect(web?.metadata.managedFields?.map((f) => [f.manager, f.operation])).toContainEqual([FIELD_MANAGER, 'Apply']);
    const generation = web?.metadata.generation;
    const again = await run(wire({ action: 'deploy', manifests, forceConflicts: false }));
    expect(again.outcomes.map((o) => o.result)).toEqual(['configured', 'configured', 'configured']);
    expect(getDeployment('web', 'fresh')?.metadata.generation).toBe(generation);
    expect(again.outcomes[1]?.generation).toBe(generation);
  });

  it('puts namespaced manifests in the override namespace and leaves cluster-scoped ones without', async () => {
    const result = await run(wire({
      action: 'deploy',
      namespace: 'shop',
      forceConflicts: false,
      manifests: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'moved', namespace: 'elsewhere' } },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'unmoved', namespace: 'elsewhere' } },
      ],
    }));
    expect(result.outcomes.map((o) => [o.namespace, o.result])).toEqual([['shop', 'created'], [undefined, 'created']]);
    expect(kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'moved' })).toBeDefined();
  });

  it('names the first cause in its message when the cluster does not answer', async () => {
    kube.faults.closeConnection({}, Infinity);
    const result = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unanswered', namespace: 'shop' } }] }));
    expect(result.ok).toBe(false);
    expect(result.outcomes[0]?.result).toBe('failed');
    expect(result.message).toBe(`1 of 1 failed, 0 skipped: ${result.outcomes[0]?.message}`);
    expect(result.message).toMatch(/socket hang up|ECONNRESET/);
  });

  it('applies nothing when a kind is not served, naming it', async () => {
    const result = await run(wire({
      action: 'deploy',
      forceConflicts: false,
      manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never', namespace: 'shop' } }, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'typo' } }],
    }));
    expect(result.ok).toBe(false);
    expect(result.message).toBe('2 of 3 failed, 1 skipped: the cluster serves no kind Widget in example.com/v1');
    expect(result.outcomes.map((o) => [o.result, o.message])).toEqual([
      ['skipped', 'not applied: manifest 1 of the operation cannot be applied'],
      ['failed', 'the cluster serves no kind Widget in example.com/v1'],
      ['failed', 'the cluster serves no kind Deploymnet in apps/v1'],
    ]);
    expect(kube.requests.count({ verb: 'patch' })).toBe(0);
    expect(kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'never' })).toBeUndefined();
  });

  it("checks the account's restrictions with the scope discovery reports", async () => {
    const result = await run(
      wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('lost')] }),
      { namespaces: ['shop'] },
    );
    expect(result.outcomes[0]).toMatchObject({ result: 'failed', message: 'namespace "default" is not one of the account\'s namespaces (shop)' });
    expect(kube.requests.count({ verb: 'patch' })).toBe(0);
  });

  it("reports a field-manager conflict in the API server's words, and takes the fields over with forceConflicts", async () => {
    await cluster.request({
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/shop/deployments/owned',
      query: { fieldManager: 'kubectl' },
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: JSON.stringify(deployment('owned', 'nginx:1', 'shop')),
    });
    const conflicting = { ...deployment('owned', 'nginx:2', 'shop') };
    const refused = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [conflicting] }));
    expect(refused.outcomes[0]).toMatchObject({ result: 'failed', code: 409, reason: 'Conflict' });
    expect(refused.outcomes[0]?.message).toMatch(/^Apply failed with \d+ conflicts?: conflict with /);
    const forced = await run(wire({ action: 'deploy', forceConflicts: true, manifests: [conflicting] }));
    expect(forced.outcomes[0]).toMatchObject({ result: 'configured', code: 200 });
    expect(getDeployment('owned')?.spec).toMatchObject({ template: { spec: { containers: [{ image: 'nginx:2' }] } } });
  });

  it('reports an invalid object with the Status message of the API server', async () => {
    const result = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid', namespace: 'shop' } }] }));
    expect(result.outcomes[0]).toMatchObject({ result: 'failed', code: 422, reason: 'Invalid' });
    expect(result.outcomes[0]?.message).toMatch(/^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value/);
  });

  it('applies a CRD and resources of its kind in one operation', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.org' },
      spec: {
        group: 'example.org',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const result = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'example.org/v1', kind: 'Gadget', metadata: { name: 'g1', namespace: 'shop' }, spec: { size: 3 } }, crd] }));
    expect(result.outcomes.map((o) => [o.kind, o.result])).toEqual([['Gadget', 'created'], ['CustomResourceDefinition', 'created']]);
  });

  it("refuses at once, without waiting for it to be served, a kind a CRD of the same operation defines when the account's restrictions forbid it", async () => {
    // Sleeping moves this clock on at once: a wait for the kind would show as many discovery reads, not as time.
    let now = 0;
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'fences.example.net' },
      spec: {
        group: 'example.net',
        scope: 'Cluster',
        names: { plural: 'fences', singular: 'fence', kind: 'Fence' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const op = wire({ action: 'deploy', forceConflicts: false, manifests: [crd, { apiVersion: 'example.net/v1', kind: 'Fence', metadata: { name: 'f1' } }] });
    const restrictions = { namespaces: ['shop'], clusterScopedKinds: ['CustomResourceDefinition.apiextensions.k8s.io'] };
    const result = await executeOperation({ operationId: op.operationId, cluster, discovery: new ResourceDiscovery(cluster, clock.now), restrictions, clock, signal: new AbortController().signal, deadline: Infinity }, op);
    expect(result.outcomes.map((o) => [o.kind, o.result])).toEqual([['CustomResourceDefinition', 'created'], ['Fence', 'failed']]);
    expect(result.outcomes[1]?.message).toContain('Fence.example.net "f1" is cluster-scoped');
    expect(kube.requests.count({ path: '/apis/example.net/v1' })).toBeLessThanOrEqual(2);
  });

  it('retries by kubernetes.retries and skips what the deadline leaves no time for', async () => {
    kube.faults.fail({ verb: 'patch', resource: 'configmaps' }, 504, 1);
    const retried = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'retried', namespace: 'shop' } }] }));
    expect(retried.outcomes[0]?.result).toBe('created');
    expect(kube.requests.count({ verb: 'patch', resource: 'configmaps' })).toBe(2);
    const late = await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'shop' } }] }), {}, Date.now() - 1);
    expect(late.outcomes[0]).toMatchObject({ result: 'skipped', message: "not started: the operation's time ran out" });
    expect(kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'late' })).toBeUndefined();
  });
});

describe('delete and scale', () => {
  it('deletes with the propagation policy asked for, and a second delete finds it absent', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('gone', 'nginx:1', 'shop'), deployment('orphaner', 'nginx:1', 'shop')] }));
    await kube.settled();
    const first = await run(wire({ action: 'delete', targets: [ref('gone')], propagationPolicy: 'Background' }));
    expect(first.outcomes[0]).toMatchObject({ result: 'deleted', code: 200 });
    const second = await run(wire({ action: 'delete', targets: [ref('gone')] }));
    expect(second.ok).toBe(true);
    expect(second.outcomes[0]).toMatchObject({ result: 'absent', code: 404, message: 'deployments.apps "gone" not found' });
    await run(wire({ action: 'delete', targets: [ref('orphaner')], propagationPolicy: 'Orphan' }));
    await kube.settled();
    const replicaSets = kube.store.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'shop' }).map((rs) => rs.metadata.name ?? '');
    expect(replicaSets.some((name) => name.startsWith('orphaner-'))).toBe(true);
    expect(replicaSets.some((name) => name.startsWith('gone-'))).toBe(false);
  });

  it('scales through the scale subresource, and says when a kind has none', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('scaled', 'nginx:1', 'shop')] }));
    const result = await run(wire({ action: 'scale', targets: [ref('scaled')], replicas: 4 }));
    expect(result.outcomes[0]).toMatchObject({ result: 'scaled', code: 200 });
    expect(getDeployment('scaled')?.spec).toMatchObject({ replicas: 4 });
    const cm = await run(wire({ action: 'scale', targets: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'settings' }], replicas: 1 }));
    expect(cm.outcomes[0]).toMatchObject({ result: 'failed', message: 'configmaps (ConfigMap) has no scale subresource on this cluster' });
  });
});

describe('identities that did not come through the API', () => {
  it('refuses, before any request, an empty name, path segments and shapes that are not Kubernetes identities', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep-a', namespace: 'shop' } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep-b', namespace: 'shop' } }] }));
    kube.requests.clear();
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop' };
    const cases: [Record<string, string>, string][] = [
      [{ ...cm, name: '' }, 'an object name is required'],
      [{ ...cm, name: '..' }, '".." cannot be an object name (no "/", "%", white space, "." or "..")'],
      [{ ...cm, namespace: 'Shop', name: 'keep-a' }, '"Shop" is not a namespace name'],
      [{ ...cm, apiVersion: 'v1/../../apis/rbac.authorization.k8s.io/v1', name: 'keep-a' }, '"v1/../../apis/rbac.authorization.k8s.io/v1" is not an API version (such as v1 or apps/v1)'],
      [{ ...cm, kind: 'Config Map', name: 'keep-a' }, '"Config Map" is not a kind'],
    ];
    for (const [target, message] of cases) {
      // Protocol messages as a rogue driver could send them: the API's checks never saw these.
      const result = await run(wire({ action: 'delete', targets: [target as never] }));
      expect(result.outcomes, JSON.stringify(target)).toEqual([expect.objectContaining({ result: 'failed', message })]);
    }
    expect(kube.requests.count()).toBe(0);
    expect(kube.store.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop' }).map((c) => c.metadata.name)).toEqual(expect.arrayContaining(['keep-a', 'keep-b']));
  });
});

describe('guarded changes', () => {
  it('patches with each patch type, once per operation id', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('patched', 'nginx:1', 'shop')] }));
    const strategic = await run(wire({ action: 'patch', target: ref('patched'), patchType: 'strategic', patch: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:3' }] } } } } }));
    expect(strategic.outcomes[0]).toMatchObject({ result: 'patched', code: 200 });
    const merge = await run(wire({ action: 'patch', target: ref('patched'), patchType: 'merge', patch: { metadata: { labels: { tier: 'web' } } } }));
    expect(merge.outcomes[0]?.result).toBe('patched');
    const append = wire({ action: 'patch', target: ref('patched'), patchType: 'json', patch: [{ op: 'add', path: '/spec/template/spec/containers/0/env', value: [] }, { op: 'add', path: '/spec/template/spec/containers/0/env/-', value: { name: 'A', value: '1' } }] }, 'op-append');
    expect((await run(append)).outcomes[0]?.result).toBe('patched');
    const generation = getDeployment('patched')?.metadata.generation;
    kube.requests.clear();
    // The same operation again (handed out a second time): nothing changes.
    const repeat = await run(append);
    expect(repeat.outcomes[0]).toMatchObject({ result: 'unchanged', message: 'already changed by an earlier attempt of this operation' });
    expect(kube.requests.count({ verb: 'patch' })).toBe(0);
    const live = getDeployment('patched');
    expect(live?.metadata.generation).toBe(generation);
    expect(live?.metadata.labels).toMatchObject({ tier: 'web' });
    expect(live?.spec).toMatchObject({ template: { spec: { containers: [{ image: 'nginx:3', env: [{ name: 'A', value: '1' }] }] } } });
    expect(live?.metadata.annotations?.[GUARD_ANNOTATION]?.split(',')).toContain('op-append');
  });

  it('reads again and retries when the object changed between its read and its patch', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('busy', 'nginx:1', 'shop')] }));
    // The first patch is answered as if someone wrote in between: 409 "the object has been modified".
    kube.faults.fail({ verb: 'patch', resource: 'deployments', name: 'busy' }, 409, 1, { message: 'Operation cannot be fulfilled on deployments.apps "busy": the object has been modified; please apply your changes to the latest version and try again' });
    const result = await run(wire({ action: 'rolloutRestart', targets: [ref('busy')] }));
    expect(result.outcomes[0]?.result).toBe('restarted');
    expect(kube.requests.count({ verb: 'get', resource: 'deployments', name: 'busy' })).toBe(2);
  });

  it('restarts a rollout once: a new pod-template annotation, and a repeat of the operation changes nothing', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('restarted', 'nginx:1', 'shop')] }));
    await kube.settled();
    const before = getDeployment('restarted')?.metadata.generation ?? 0;
    const op = wire({ action: 'rolloutRestart', targets: [ref('restarted')] });
    const result = await run(op);
    expect(result.outcomes[0]?.result).toBe('restarted');
    const after = getDeployment('restarted');
    expect(after?.metadata.generation).toBe(before + 1);
    expect((after?.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations['kubectl.kubernetes.io/restartedAt']).toMatch(/^\d{4}-/);
    expect((await run(op)).outcomes[0]?.result).toBe('unchanged');
    expect(getDeployment('restarted')?.metadata.generation).toBe(before + 1);
  });

  it('undoes a rollout to the previous revision or the one asked for, and names a revision that is not there', async () => {
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('undone', 'nginx:1', 'shop')] }));
    await kube.settled();
    await run(wire({ action: 'deploy', forceConflicts: false, manifests: [deployment('undone', 'nginx:2', 'shop')] }));
    await kube.settled();
    await run(wire({ action: 'deploy', forceConflicts: true, manifests: [deployment('undone', 'nginx:3', 'shop')] }));
    await kube.settled();
    const image = () => (getDeployment('undone')?.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image;
    const back = await run(wire({ action: 'rolloutUndo', target: ref('undone'), toRevision: 0 }));
    expect(back.outcomes[0]).toMatchObject({ result: 'rolledBack', message: 'rolled back to revision 2' });
    expect(image()).toBe('nginx:2');
    await kube.settled();
    const toFirst = await run(wire({ action: 'rolloutUndo', target: ref('undone'), toRevision: 1 }));
    expect(toFirst.outcomes[0]).toMatchObject({ result: 'rolledBack', message: 'rolled back to revision 1' });
    expect(image()).toBe('nginx:1');
    await kube.settled();
    const missing = await run(wire({ action: 'rolloutUndo', target: ref('undone'), toRevision: 42 }));
    expect(missing.outcomes[0]?.result).toBe('failed');
    expect(missing.outcomes[0]?.message).toMatch(/^unable to find specified revision 42 in history \(revisions: /);
  });
});
