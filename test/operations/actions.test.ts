import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld, type AccountsWorld } from '../support/accounts-world.ts';
import { finished, getOperation, run, submitOperation } from '../support/operations.ts';

// The stand-in deployment controller makes ReplicaSets and revisions, so rollouts can be undone.
const world = useAccountsWorld({ deploymentController: true });

/** A driver, one agent of the zone, and `prod` active on it (caching pods only: operations ignore that). */
async function served(w: AccountsWorld): Promise<void> {
  await w.fresh([{ name: 'prod', kinds: ['pod'], omitKinds: ['deployment', 'configMap'] }]);
  const driver = await w.driver();
  await w.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
  await w.activate('prod');
  await vi.waitFor(async () => expect((await w.account('prod')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);
}

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata: { name: shop }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: web-settings }
data: { color: blue }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: elsewhere }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: app, image: "nginx:1" }] }
`;

const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };

describe('operations end to end: API, table, driver, agent, API server', () => {
  it('runs every kind of operation on the cluster, on kinds left out of caching', async () => {
    await served(world);
    const kube = world.kube;
    const deployment = () => kube.store.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
    const image = () => (deployment()?.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image;

    const deployed = await run(world.app, 'prod', { action: 'deploy', manifests: MANIFESTS, namespace: 'shop' });
    expect(deployed).toMatchObject({ state: 'SUCCEEDED', attempts: 1, agentId: 'agent-a' });
    expect(deployed.outcomes.map((o) => [o.kind, o.namespace, o.result, o.code])).toEqual([
      ['Namespace', undefined, 'created', 201],
      ['ConfigMap', 'shop', 'created', 201],
      ['Deployment', 'shop', 'created', 201],
    ]);
    expect(deployment()?.metadata.managedFields?.some((f) => f.manager === 'vendor-agent' && f.operation === 'Apply')).toBe(true);
    await kube.settled();

    const scaled = await run(world.app, 'prod', { action: 'scale', targets: [web], replicas: 3 });
    expect(scaled.outcomes[0]).toMatchObject({ result: 'scaled', code: 200 });
    expect(deployment()?.spec).toMatchObject({ replicas: 3 });

    const strategic = await run(world.app, 'prod', { action: 'patch', target: web, patchType: 'strategic', patch: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } } });
    expect(strategic.outcomes[0]?.result).toBe('patched');
    expect(image()).toBe('nginx:2');
    await kube.settled();
    const merge = await run(world.app, 'prod', { action: 'patch', target: web, patchType: 'merge', patch: { metadata: { labels: { tier: 'front' } } } });
    expect(merge.state).toBe('SUCCEEDED');
    const json = await run(world.app, 'prod', { action: 'patch', target: { ...web, kind: 'Deployment' }, patchType: 'json', patch: [{ op: 'replace', path: '/spec/replicas', value: 2 }] });
    expect(json.state).toBe('SUCCEEDED');
    expect(deployment()?.metadata.labels).toMatchObject({ tier: 'front' });
    expect(deployment()?.spec).toMatchObject({ replicas: 2 });

    const generation = deployment()?.metadata.generation ?? 0;
    const restarted = await run(world.app, 'prod', { action: 'rolloutRestart', targets: [web] });
    expect(restarted.outcomes[0]?.result).toBe('restarted');
    expect(deployment()?.metadata.generation).toBe(generation + 1);
    await kube.settled();

    const undone = await run(world.app, 'prod', { action: 'rolloutUndo', target: web, toRevision: 1 });
    expect(undone.outcomes[0]).toMatchObject({ result: 'rolledBack', message: 'rolled back to revision 1' });
    expect(image()).toBe('nginx:1');
    await kube.settled();

    const deleted = await run(world.app, 'prod', { action: 'delete', targets: [web, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'web-settings' }], propagationPolicy: 'Background' });
    expect(deleted.outcomes.map((o) => o.result)).toEqual(['deleted', 'deleted']);
    expect(deployment()).toBeUndefined();
    const again = await run(world.app, 'prod', { action: 'delete', targets: [web] });
    expect(again).toMatchObject({ state: 'SUCCEEDED', outcomes: [{ result: 'absent', code: 404 }] });
  });

  it("ends FAILED with the API server's own message, and names kinds the cluster does not serve without applying anything", async () => {
    await served(world);
    const conflict = await run(world.app, 'prod', {
      action: 'deploy',
      manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name', namespace: 'default' } }],
    });
    expect(conflict).toMatchObject({ state: 'FAILED' });
    // The top-level message names the first cause, in the API server's words.
    expect(conflict.message).toMatch(/^1 of 1 failed, 0 skipped: ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value/);
    expect(conflict.outcomes[0]).toMatchObject({ result: 'failed', code: 422, reason: 'Invalid' });
    expect(conflict.outcomes[0]?.message).toMatch(/^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value/);
    world.kube.requests.clear();
    const unknown = await run(world.app, 'prod', {
      action: 'deploy',
      manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine', namespace: 'default' } }, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } }],
    });
    expect(unknown.state).toBe('FAILED');
    expect(unknown.outcomes.map((o) => [o.result, o.message])).toEqual([
      ['skipped', 'not applied: manifest 1 of the operation cannot be applied'],
      ['failed', 'the cluster serves no kind Widget in example.com/v1'],
    ]);
    expect(world.kube.requests.count({ verb: 'patch' })).toBe(0);
  });

  it('queues an operation until an agent holds the account, then runs it', async () => {
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const agent = await world.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toHaveLength(1), WAIT);
    await agent.stop();
    const submitted = await submitOperation(world.app, 'prod', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later', namespace: 'default' } }] });
    expect(submitted.status).toBe(202);
    const id = submitted.json.id as string;
    expect((await getOperation(world.app, id)).state).toBe('QUEUED');
    await world.agent('agent-b', { target: `127.0.0.1:${driver.port}` });
    const view = await finished(world.app, id);
    expect(view).toMatchObject({ state: 'SUCCEEDED', agentId: 'agent-b', attempts: 1 });
  });
});
