import { describe, expect, it, vi } from 'vitest';
import { liveSessions } from '../../shared/table/agents/sessions.ts';
import { useAccountsWorld } from '../support/accounts-world.ts';
import { startTcpBalancer } from '../support/tcp-balancer.ts';

const world = useAccountsWorld();

const WAIT = { timeout: 20_000, interval: 20 };

describe('several driver replicas on one table', () => {
  it('serve agents spread across them; every agent gets the account and exactly one caches it', async () => {
    await world.fresh([{ name: 'prod' }, { name: 'stage' }]);
    const one = await world.driver({ replicaId: 'replica-1' });
    const two = await world.driver({ replicaId: 'replica-2' });
    const balancer = await startTcpBalancer([one.port, two.port]);
    try {
      const agents = await Promise.all(['a1', 'a2', 'a3', 'a4'].map((id) => world.agent(id, { target: `127.0.0.1:${balancer.port}` })));
      await vi.waitFor(async () => expect((await liveSessions(world.table, Date.now())).length).toBe(4), WAIT);
      const replicas = (await liveSessions(world.table, Date.now())).map((s) => s.replicaId);
      expect(new Set(replicas)).toEqual(new Set(['replica-1', 'replica-2']));

      await world.call('POST', '/vendor/accounts', [
        { name: 'prod', kubeconfigFile: world.kubeconfig('prod') },
        { name: 'stage', kubeconfigFile: world.kubeconfig('stage') },
      ]);
      expect((await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }, { name: 'stage', state: 'ACTIVE' }])).status).toBe(200);
      for (const name of ['prod', 'stage']) {
        await vi.waitFor(async () => expect(((await world.account(name)).agents as unknown[]).length).toBe(4), WAIT);
        const account = await world.account(name);
        const caching = (account.agents as { agentId: string; caching: boolean }[]).filter((a) => a.caching);
        expect(caching).toHaveLength(1);
        const record = await world.record(name);
        expect(record?.cachingAgentId).toBe(caching[0]?.agentId);
        // Every agent agrees on who caches, whichever replica it is connected to.
        const views = agents.map((a) => a.holder().view(name));
        expect(views.filter((v) => v?.caching)).toHaveLength(1);
        expect(views.every((v) => v?.cachingEpoch === record?.cachingEpoch)).toBe(true);
      }
    } finally {
      await balancer.close();
    }
  });

  it('a replica that goes away: its agents reconnect to the other, keep their accounts and caching role, and get what changed meanwhile', async () => {
    await world.fresh([{ name: 'prod' }, { name: 'later' }]);
    const one = await world.driver({ replicaId: 'replica-1', assignment: { handoverGraceMs: 60_000 } });
    const two = await world.driver({ replicaId: 'replica-2', assignment: { handoverGraceMs: 60_000 } });
    const balancer = await startTcpBalancer([one.port, two.port]);
    try {
      const agents = await Promise.all(['a1', 'a2'].map((id) => world.agent(id, { target: `127.0.0.1:${balancer.port}` })));
      await vi.waitFor(() => expect(one.sessions().length + two.sessions().length).toBe(2), WAIT);
      await world.call('POST', '/vendor/accounts', [
        { name: 'prod', kubeconfigFile: world.kubeconfig('prod') },
        { name: 'later', kubeconfigFile: world.kubeconfig('later') },
      ]);
      await world.call('PATCH', '/vendor/accounts', [{ name: 'prod', state: 'ACTIVE' }]);
      await vi.waitFor(async () => expect(((await world.account('prod')).agents as unknown[]).length).toBe(2), WAIT);
      const before = await world.record('prod');

      // Replica 1 stops; while its agents reconnect, another account is activated.
      balancer.backends = [two.port];
      await one.close(100);
      await world.call('PATCH', '/vendor/accounts', [{ name: 'later', state: 'ACTIVE' }]);
      await vi.waitFor(() => expect(two.sessions().map((s) => s.agentId).sort()).toEqual(['a1', 'a2']), WAIT);
      await vi.waitFor(async () => expect(((await world.account('later')).agents as unknown[]).length).toBe(2), WAIT);
      expect(await world.record('prod')).toMatchObject({ state: 'ACTIVE', cachingAgentId: before?.cachingAgentId, cachingEpoch: before?.cachingEpoch });
      expect(((await world.account('prod')).agents as unknown[]).length).toBe(2);
      for (const a of agents) expect(a.holder().view('prod')?.caching).toBe(a.id === before?.cachingAgentId);
    } finally {
      await balancer.close();
    }
  });
});
