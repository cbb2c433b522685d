import { describe, expect, it, vi } from 'vitest';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { getAccounts } from '../../shared/table/accounts/records.ts';
import { AGENT_TOKEN, useAccountsWorld } from '../support/accounts-world.ts';
import { ProtocolAgent } from '../support/protocol-agent.ts';

const world = useAccountsWorld();

const WAIT = { timeout: 20_000, interval: 25 };
const ZONE = 'blue_infra';
const NAMES = Array.from({ length: 12 }, (_, i) => `spread-${String(i).padStart(2, '0')}`);
const CLUSTER = 'https://cluster.spread.example:6443';
const SCOPE = { group: 'apps', kind: 'Deployment', namespace: 'web', synthetic: false };

async function records(): Promise<AccountRecord[]> {
  const found = await getAccounts(world.table, NAMES, { consistent: true });
  return NAMES.map((n) => found.get(n) as AccountRecord);
}

/** Caching roles per agent, as the table has them. */
async function spread(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const r of await records()) if (r.cachingAgentId !== undefined) out[r.cachingAgentId] = (out[r.cachingAgentId] ?? 0) + 1;
  return out;
}

const epochs = async () => (await records()).reduce((sum, r) => sum + (r.cachingEpoch ?? 0), 0);

describe('the caching spread over a zone of agents on two driver replicas', () => {
  it('spreads the roles to agents that join, through either replica, moving only what is needed; a moved role resumes from stored progress; a leaving agent’s roles go to the rest', async () => {
    await world.fresh(NAMES.map((name) => ({ name, kubeconfigFile: '/k/spread' })));
    const one = await world.driver({ replicaId: 'replica-1' });
    const two = await world.driver({ replicaId: 'replica-2' });
    const agents: ProtocolAgent[] = [];
    const join = (id: string, port: number) => {
      const a = new ProtocolAgent({ target: `127.0.0.1:${port}`, agentId: id, zone: ZONE, token: AGENT_TOKEN, reconnectTimeoutMs: 50 });
      agents.push(a);
      return a;
    };
    try {
      // One agent first: it caches every account of the zone.
      const a1 = join('a1', one.port);
      await vi.waitFor(() => expect(a1.connected).toBe(true), WAIT);
      expect((await world.call('POST', '/vendor/accounts', NAMES.map((name) => ({ name, zoneId: ZONE })))).status).toBe(200);
      expect((await world.call('PATCH', '/vendor/accounts', NAMES.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);
      await vi.waitFor(async () => expect(await spread()).toEqual({ a1: 12 }), WAIT);
      await vi.waitFor(() => expect(a1.caching()).toHaveLength(12), WAIT);
      expect(await epochs()).toBe(12);

      // a1 records cache progress for the first account, as its caching agent.
      const first = NAMES[0] as string;
      const asked = await a1.resume(first, CLUSTER);
      expect(asked.accepted).toBe(true);
      await a1.progress(first, Number(asked.queryId), [{ scope: SCOPE, resourceVersion: '4242', objects: 7 }]);
      await vi.waitFor(async () => expect((await a1.resume(first, CLUSTER)).scopes).toHaveLength(1), WAIT);

      // A second agent joins through the other replica: half the roles move to it, no more.
      const a2 = join('a2', two.port);
      await vi.waitFor(async () => expect(await spread()).toEqual({ a1: 6, a2: 6 }), WAIT);
      await vi.waitFor(() => expect(a2.caching()).toHaveLength(6), WAIT);
      expect(await epochs()).toBe(12 + 6);

      // A third through the first replica: 4 each, two from each of the others.
      const a3 = join('a3', one.port);
      await vi.waitFor(async () => expect(await spread()).toEqual({ a1: 4, a2: 4, a3: 4 }), WAIT);
      expect(await epochs()).toBe(12 + 6 + 4);
      await vi.waitFor(() => expect([a1, a2, a3].map((a) => a.caching().length)).toEqual([4, 4, 4]), WAIT);
      // Every agent agrees with the table on who caches what, at the table's epoch.
      for (const r of await records()) {
        for (const a of [a1, a2, a3]) {
          expect(a.held(r.name)?.caching).toBe(r.cachingAgentId === a.id);
          if (r.cachingAgentId === a.id) expect(a.held(r.name)?.cachingEpoch).toBe(r.cachingEpoch);
        }
      }

      // The first account moved away from a1: its new caching agent resumes from a1's progress.
      const holder = [a2, a3].find((a) => a.caching().includes(first));
      expect(holder).toBeDefined();
      const resumed = await (holder as ProtocolAgent).resume(first, CLUSTER);
      expect(resumed).toMatchObject({ accepted: true, scopes: [{ scope: SCOPE, resourceVersion: '4242', objects: 7 }] });

      // a1 leaves: its four roles go to a2 and a3, two each (the takeovers go to the least loaded; two
      // replicas deciding at once may leave one more move to the spread).
      const leaving = a1.caching();
      const beforeLeave = await epochs();
      a1.stop();
      await vi.waitFor(async () => expect(await spread()).toEqual({ a2: 6, a3: 6 }), WAIT);
      await vi.waitFor(() => expect([a2.caching().length, a3.caching().length]).toEqual([6, 6]), WAIT);
      for (const name of leaving) expect([...a2.caching(), ...a3.caching()]).toContain(name);
      expect(await epochs()).toBeGreaterThanOrEqual(beforeLeave + 4);
    } finally {
      for (const a of agents) a.stop();
    }
  }, 90_000);
});
