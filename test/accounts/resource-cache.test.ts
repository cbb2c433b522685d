/**
 * The resource cache in the whole flow: the production driver modules and the agent's own account
 * workers, with the caching role as the election hands it out. The cache's own behaviour is tested
 * in agent/resources/; this is about who caches, and the hand-over when the role moves.
 */
import { describe, expect, it, vi } from 'vitest';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';

const world = useAccountsWorld();

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'shop' }, data: { a: '1' } });

async function cachedConfigMaps(): Promise<string[]> {
  const page = await world.call('GET', '/vendor/accounts/prod/resources?kind=configmap&namespace=shop');
  expect(page.status).toBe(200);
  return (page.json.items as { name: string }[]).map((i) => i.name).sort();
}

async function reportedBy(): Promise<unknown> {
  return (await world.call('GET', '/vendor/accounts/prod/cache')).json.reportedBy;
}

const said = (logs: Record<string, unknown>[], msg: string) => logs.some((l) => l.msg === msg);

describe('the resource cache and the caching role', () => {
  it('only the elected agent caches; when the role moves off a live agent its cache stops and the new caching agent carries on', async () => {
    world.kube.store.ensureNamespace('shop');
    for (const name of ['a', 'b']) world.kube.store.upsert(configMap(name));
    await world.fresh([{ name: 'prod' }]);
    const driver = await world.driver();
    const target = `127.0.0.1:${driver.port}`;
    // The first agent comes back slowly after a break: long after the hand-over grace.
    const first = await world.agent('first', { target, reconnectTimeoutMs: 5_000 });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('prod');
    const second = await world.agent('second', { target });
    await vi.waitFor(async () => expect((await world.account('prod')).agents).toEqual([{ agentId: 'first', caching: true }, { agentId: 'second', caching: false }]), WAIT);

    await vi.waitFor(async () => expect(await cachedConfigMaps()).toEqual(['a', 'b']), WAIT);
    await vi.waitFor(async () => expect(await reportedBy()).toBe('first'), WAIT);
    expect(said(first.logs(), 'caching the account')).toBe(true);
    expect(said(second.logs(), 'caching the account')).toBe(false);

    // The first agent's stream breaks; the grace passes before it is back, so the role moves.
    driver.sessions().find((s) => s.agentId === 'first')?.end(new Error('network trouble'));
    await vi.waitFor(async () => expect(await world.record('prod')).toMatchObject({ cachingAgentId: 'second', cachingEpoch: 2 }), WAIT);
    await vi.waitFor(() => expect(said(second.logs(), 'caching the account')).toBe(true), WAIT);
    world.kube.store.upsert(configMap('c'));
    world.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'a' });
    await vi.waitFor(async () => expect(await cachedConfigMaps()).toEqual(['b', 'c']), WAIT);
    await vi.waitFor(async () => expect(await reportedBy()).toBe('second'), WAIT);

    // Back, the first agent is told it no longer caches, and its cache stops while the agent runs on.
    await vi.waitFor(() => expect(first.holder().view('prod')).toMatchObject({ caching: false, cachingEpoch: 2 }), { ...WAIT, timeout: 20_000 });
    await vi.waitFor(() => expect(said(first.logs(), 'no longer caching the account')).toBe(true), WAIT);
    world.kube.store.upsert(configMap('d'));
    await vi.waitFor(async () => expect(await cachedConfigMaps()).toEqual(['b', 'c', 'd']), WAIT);
    expect(await reportedBy()).toBe('second');
    // What the first agent still had to send from before the break was refused by the epoch rule.
    for (const refusal of world.driverLogs.lines.filter((l) => String(l.msg).includes(' refused: '))) {
      expect(refusal).toMatchObject({ agentId: 'first', cachingEpoch: 1 });
    }
  }, 60_000);
});
