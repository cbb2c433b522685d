import { describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import type { ResourceEvents__Output } from '../../shared/protocol/messages.ts';
import { createAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { listResources } from '../../shared/table/resources/objects.ts';
import { scopeProgress } from '../../shared/table/resources/scopes.ts';
import { useTestTables } from '../../test/support/table.ts';
import type { AgentIdentity } from '../../shared/agents/identity.ts';
import type { AgentSession } from '../agent-session.ts';
import { FLEET_IDENTITY } from '../auth.ts';
import { createDriverMetrics } from '../metrics/metrics.ts';
import { cacheHandlers } from './handlers.ts';

const tables = useTestTables();

const scope = { group: '', kind: 'ConfigMap', namespace: 'a', synthetic: false };
const CLUSTER = 'https://10.0.0.1:6443';

function events(name: string, rv: string, resumeQueryId: number): ResourceEvents__Output {
  return {
    account: 'prod',
    cachingEpoch: 1,
    changes: [{ group: '', kind: 'ConfigMap', namespace: 'a', name, resourceVersion: rv, deleted: false, object: JSON.stringify({ metadata: { name, resourceVersion: rv } }) }],
    syncs: [],
    progress: [{ scope, resourceVersion: rv, objects: 1 }],
    scopeSet: null,
    health: [],
    clusterStatus: null,
    resumeQueryId,
  };
}

/** A stream of agent-1 as the handlers see it; `sent` collects what the driver answers on it. */
function stream(id: string, zone = 'z', identity: AgentIdentity = FLEET_IDENTITY) {
  const sent: unknown[] = [];
  const session = { id, agentId: 'agent-1', zone, identity, send: async (m: unknown) => void sent.push(m) } as unknown as AgentSession;
  return { session, sent };
}

async function setUp() {
  const table = await tables.fresh();
  await createAccount(table, 'prod', 1);
  await updateAccount(table, 'prod', 1, { cachingAgentId: 'agent-1', cachingEpoch: 1 }, 1);
  const cache = cacheHandlers({ table, clock: systemClock, log: silentLogger(), writer: { progressIntervalMs: 0 } });
  const h = cache.handlers as Required<typeof cache.handlers>;
  const ask = (s: AgentSession, queryId: number, cluster = CLUSTER) => h.resumeQuery({ seq: 0, body: { queryId, account: 'prod', cachingEpoch: 1, maxAgeMs: 60_000, cluster }, bytes: 0 }, s);
  const take = async (s: AgentSession, body: ResourceEvents__Output) => {
    await h.resourceEvents({ seq: 1, body, bytes: 0 }, s);
    await cache.writer('prod')!.idle();
  };
  return { table, cache, ask, take };
}

describe('the resource cache handlers', () => {
  it('record progress only of batches made under a resume answer given on the same stream; their changes are kept either way', async () => {
    const { table, cache, ask, take } = await setUp();
    try {
      // A batch made under answer 7 (given by another replica, which took earlier changes and died),
      // sent again on the agent's next stream before it asks where the driver stands.
      const next = stream('s-2');
      await take(next.session, events('after-loss', '120', 7));
      expect(await scopeProgress(table, 'prod')).toEqual([]);
      expect((await listResources(table, 'prod', {}, 10)).items.map((i) => i.name)).toEqual(['after-loss']);
      // Nor is progress recorded from a batch made before any answer.
      await take(next.session, events('after-loss', '121', 0));
      expect(await scopeProgress(table, 'prod')).toEqual([]);

      // Asked and answered here: the agent learns the driver holds nothing of the scope (and lists again).
      await ask(next.session, 8);
      expect(next.sent).toMatchObject([{ kind: 'resumeInfo', body: { queryId: 8, accepted: true, scopes: [] } }]);
      await take(next.session, events('listed', '130', 8));
      expect((await scopeProgress(table, 'prod')).map((p) => p.resourceVersion)).toEqual(['130']);

      // Answer 8 holds on its own stream only; a query refused aligns nothing.
      const other = stream('s-3');
      await take(other.session, events('later', '140', 8));
      expect((await scopeProgress(table, 'prod')).map((p) => p.resourceVersion)).toEqual(['130']);
      await updateAccount(table, 'prod', 2, { cachingEpoch: 2 }, 2);
      cache.forget('prod');
      await ask(other.session, 9);
      expect(other.sent).toMatchObject([{ kind: 'resumeInfo', body: { queryId: 9, accepted: false } }]);
      await updateAccount(table, 'prod', 3, { cachingEpoch: 1 }, 3);
      cache.forget('prod');
      await take(other.session, events('later', '150', 9));
      expect((await scopeProgress(table, 'prod')).map((p) => p.resourceVersion)).toEqual(['130']);
      expect((await listResources(table, 'prod', {}, 10)).items.map((i) => `${i.name}@${i.resourceVersion}`).sort()).toEqual(['after-loss@121', 'later@150', 'listed@130']);
    } finally {
      await cache.close();
    }
  });

  it('offer for resume only progress recorded for the API server the query names', async () => {
    const { table, cache, ask, take } = await setUp();
    try {
      const first = stream('s-1');
      await ask(first.session, 1);
      await take(first.session, events('cm', '500', 1));
      expect(await scopeProgress(table, 'prod')).toMatchObject([{ resourceVersion: '500', cluster: CLUSTER }]);

      // The account now points at another cluster: its versions mean nothing there, so it lists.
      const elsewhere = stream('s-2');
      await ask(elsewhere.session, 2, 'https://10.9.9.9:6443');
      expect(elsewhere.sent).toMatchObject([{ kind: 'resumeInfo', body: { queryId: 2, accepted: true, scopes: [] } }]);
      const back = stream('s-3');
      await ask(back.session, 3);
      expect(back.sent).toMatchObject([{ kind: 'resumeInfo', body: { queryId: 3, accepted: true, scopes: [{ scope, resourceVersion: '500' }] } }]);
    } finally {
      await cache.close();
    }
  });

  it('refuse cache data from the caching agent id on a stream whose zone or identity may not hold the account', async () => {
    const { table, cache, ask } = await setUp();
    const h = cache.handlers as Required<typeof cache.handlers>;
    const send = async (session: AgentSession, name: string) => {
      await h.resourceEvents({ seq: 1, body: events(name, '10', 0), bytes: 0 }, session);
      await cache.writer('prod')?.idle();
    };
    const names = async () => (await listResources(table, 'prod', {}, 10)).items.map((i) => i.name);
    const closed: AgentIdentity = { ...FLEET_IDENTITY, name: 'closed', unzoned: false };
    try {
      // Registered with no zone: only an identity that allows unzoned accounts feeds its cache.
      await updateAccount(table, 'prod', 2, { registration: { at: 2 } }, 2);
      cache.forget('prod');
      await send(stream('s-1', 'z', closed).session, 'refused');
      expect(await names()).toEqual([]);
      await send(stream('s-2', 'z').session, 'taken');
      expect(await names()).toEqual(['taken']);

      // Pinned to zone z: the same agent id on a stream of another zone is refused, its resume query too.
      await updateAccount(table, 'prod', 3, { registration: { zoneId: 'z', at: 3 } }, 3);
      cache.forget('prod');
      const elsewhere = stream('s-3', 'rogue_zone');
      await send(elsewhere.session, 'from-elsewhere');
      await ask(elsewhere.session, 1);
      expect(elsewhere.sent).toMatchObject([{ kind: 'resumeInfo', body: { accepted: false, message: expect.stringContaining('zone "rogue_zone"') } }]);
      expect(await names()).toEqual(['taken']);
    } finally {
      await cache.close();
    }
  });

  it('counts a write the table refused for good in the driver\'s metrics, by what it was', async () => {
    const table = await tables.fresh();
    await createAccount(table, 'prod', 1);
    await updateAccount(table, 'prod', 1, { cachingAgentId: 'agent-1', cachingEpoch: 1 }, 1);
    const metrics = createDriverMetrics();
    const cache = cacheHandlers({ table, clock: systemClock, log: silentLogger(), writer: { progressIntervalMs: 0 }, metrics });
    try {
      // Past the table's key, as only a message the protocol's check did not see could be.
      const body = events('n'.repeat(1100), '1', 0);
      await (cache.handlers as Required<typeof cache.handlers>).resourceEvents({ seq: 1, body: { ...body, progress: [] }, bytes: 0 }, stream('s-1').session);
      await cache.writer('prod')!.idle();
      const dropped = await metrics.registry.getSingleMetric('vendor_driver_resource_writes_dropped_total')?.get();
      expect(dropped?.values.map((v) => [v.labels.write, v.value])).toEqual([['object', 1]]);
    } finally {
      await cache.close();
    }
  });
});
