/**
 * omitNamespaces and onlySpinnakerManaged through the whole flow: an account defined by the driver
 * (its settings travel in the assignment) and one of the agent's own file (announced in its hello),
 * cached by a real agent from the test API server, served by the API. What deploy applies carries the
 * mark onlySpinnakerManaged selects by. The cache's own behaviour is tested in agent/resources/.
 */
import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';
import { run } from '../support/operations.ts';

const world = useAccountsWorld();

interface Served {
  kind: string;
  namespace?: string;
  name: string;
  object: { metadata: { labels?: Record<string, string> } };
}

/** Every resource the API serves for `account`, following the cursor. */
async function served(account: string): Promise<Served[]> {
  const out: Served[] = [];
  let cursor: string | undefined;
  do {
    const page = await world.call('GET', `/vendor/accounts/${account}/resources?limit=1000${cursor === undefined ? '' : `&cursor=${cursor}`}`);
    expect(page.status).toBe(200);
    out.push(...(page.json.items as Served[]));
    cursor = page.json.nextCursor as string | undefined;
  } while (cursor !== undefined);
  return out;
}

const keyOf = (r: Served) => `${r.kind}|${r.namespace === undefined ? '' : `${r.namespace}/`}${r.name}`;

const configMap = (namespace: string, name: string, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, ...(labels === undefined ? {} : { labels }) },
  data: { a: '1' },
});

const MANIFESTS = `
apiVersion: v1
kind: ConfigMap
metadata: { name: deployed, namespace: shop, labels: { app: web } }
data: { color: blue }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: deployed, namespace: hidden }
data: { color: red }
`;

describe('the cache keys of an account, from its definition to what the API serves', () => {
  it('a driver-defined account with onlySpinnakerManaged and omitNamespaces serves only what deploy applied outside the omitted namespaces', async () => {
    for (const ns of ['shop', 'hidden']) {
      world.kube.store.ensureNamespace(ns);
      world.kube.store.upsert(configMap(ns, 'hand-made'));
    }
    await world.fresh([{ name: 'prod', onlySpinnakerManaged: true, omitNamespaces: ['hidden'] }]);
    const driver = await world.driver();
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'agent-a', caching: true }]), WAIT);

    const deployed = await run(world.app, 'prod', { action: 'deploy', manifests: MANIFESTS });
    expect(deployed.outcomes.map((o) => [o.namespace, o.result])).toEqual([['shop', 'created'], ['hidden', 'created']]);
    // Operations are not shaped by the cache keys; what deploy applied carries the mark, merged with the manifest's labels.
    const live = world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'deployed' });
    expect(live?.metadata.labels).toEqual({ app: 'web', 'vendor-agent.io/managed': 'true' });
    expect(world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'hidden', name: 'deployed' })?.metadata.labels).toEqual({ 'vendor-agent.io/managed': 'true' });

    await vi.waitFor(async () => expect((await served('prod')).map(keyOf)).toEqual(['ConfigMap|shop/deployed']), WAIT);
    const [item] = await served('prod');
    expect(item?.object.metadata.labels).toMatchObject({ 'vendor-agent.io/managed': 'true' });
    // The API server did the choosing: every list and watch asked for the label and left the namespace out.
    const asked = world.kube.requests.log().filter((r) => r.resource === 'configmaps' && (r.verb === 'list' || r.verb === 'watch'));
    expect(asked.length).toBeGreaterThan(0);
    for (const r of asked) expect(decodeURIComponent(r.query)).toMatch(/labelSelector=vendor-agent\.io\/managed=true.*fieldSelector=metadata\.namespace!=hidden|fieldSelector=metadata\.namespace!=hidden.*labelSelector=vendor-agent\.io\/managed=true/);
  }, 60_000);

  it('a static account of the agent file with the same keys is announced with them and served the same way', async () => {
    // Namespaces of its own: the world's API server keeps what the test before made.
    world.kube.store.ensureNamespace('edge-shop');
    world.kube.store.ensureNamespace('edge-hidden');
    world.kube.store.upsert(configMap('edge-shop', 'hand-made'));
    world.kube.store.upsert(configMap('edge-shop', 'marked', { 'vendor-agent.io/managed': 'true' }));
    world.kube.store.upsert(configMap('edge-hidden', 'marked', { 'vendor-agent.io/managed': 'true' }));
    for (const namespace of ['shop', 'hidden']) {
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'deployed' };
      if (world.kube.store.get(ref) !== undefined) world.kube.store.delete(ref);
    }
    await world.fresh([]);
    const driver = await world.driver();
    const edge = { name: 'edge', kubeConfigFile: world.kubeconfig('edge'), onlySpinnakerManaged: true, omitNamespaces: ['edge-hidden'] };
    const agent = await world.agent('r1', { target: `127.0.0.1:${driver.port}`, accounts: [edge] });
    await vi.waitFor(async () => expect((await world.account('edge')).agents).toEqual([{ agentId: 'r1', caching: true }]), WAIT);
    expect(await world.account('edge')).toMatchObject({ source: 'static-agent-config', config: { onlySpinnakerManaged: true, omitNamespaces: ['edge-hidden'] } });
    expect(agent.holder().view('edge')?.settings).toMatchObject({ onlySpinnakerManaged: true, omitNamespaces: ['edge-hidden'] });
    await vi.waitFor(async () => expect((await served('edge')).map(keyOf)).toEqual(['ConfigMap|edge-shop/marked']), WAIT);
    // No warning about either key: both are in effect.
    expect(agent.logs().filter((l) => l.level === 'warn' && String(l.key ?? '').includes('accounts[0]'))).toEqual([]);
  }, 60_000);
});
