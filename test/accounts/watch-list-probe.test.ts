/**
 * Whether the API server offers WatchList is learnt once per cluster, not once per account: an agent
 * holding three accounts on one API server (two of its own file, one the driver assigns), each with a
 * kubeconfig of its own for the same server and user, asks once. The server here is one without
 * WatchList (Kubernetes 1.20), so the one probe is refused and every account lists in pages.
 */
import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld({ watchList: false });

async function servedConfigMaps(account: string): Promise<string[]> {
  const page = await world.call('GET', `/vendor/accounts/${account}/resources?kind=configmap&namespace=shop`);
  return page.status === 200 ? (page.json.items as { name: string }[]).map((i) => i.name) : [];
}

describe('the WatchList probe', () => {
  it('is made once per cluster, shared by the accounts on it', async () => {
    world.kube.store.ensureNamespace('shop');
    world.kube.store.upsert({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' }, data: { a: '1' } });
    await world.fresh([{ name: 'prod' }]);
    world.kube.requests.clear();
    const driver = await world.driver();
    const accounts = ['edge-a', 'edge-b'].map((name) => ({ name, kubeConfigFile: world.kubeconfig(name) }));
    await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, accounts });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    for (const account of ['edge-a', 'edge-b', 'prod']) await vi.waitFor(async () => expect(await servedConfigMaps(account)).toEqual(['settings']), WAIT);

    const probes = world.kube.requests.log().filter((r) => r.verb === 'watch' && r.query.includes('sendInitialEvents=true'));
    expect(probes).toHaveLength(1);
    expect(probes[0]?.code).toBeGreaterThanOrEqual(400);
    // Every account listed its config maps in pages instead.
    expect(world.kube.requests.count({ verb: 'list', resource: 'configmaps' })).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
