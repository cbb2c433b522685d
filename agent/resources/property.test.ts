/**
 * Whatever happens to the cluster and the connections in between, the driver's table ends up equal
 * to the cluster: random creates, updates and deletes, interleaved with dropped and cut watches,
 * compaction (all kinds or one), failing requests, cut sockets and agent restarts.
 * Seeded: set CACHE_PROPERTY_SEED to replay a failure (fast-check prints the seed and the path).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUILT_IN_KINDS, CacheFixture, configMap, pod, type CacheAgent } from '../../test/resource-cache-harness.ts';

type Op =
  | { t: 'upsert'; kind: 'cm' | 'pod'; ns: string; name: string; value: number }
  | { t: 'delete'; kind: 'cm' | 'pod'; ns: string; name: string }
  | { t: 'dropWatches'; mode: 'end' | 'destroy' }
  | { t: 'compact'; only: boolean }
  | { t: 'fail'; verb: 'watch' | 'list'; resource: 'configmaps' | 'pods'; code: 429 | 500 | 503; times: number }
  | { t: 'closeSockets' }
  | { t: 'restartAgent' }
  | { t: 'pause'; ms: number };

const name = fc.constantFrom('x0', 'x1', 'x2', 'x3', 'x4', 'x5');
const ns = fc.constantFrom('a', 'b');
const kind = fc.constantFrom<'cm' | 'pod'>('cm', 'pod');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('upsert' as const), kind, ns, name, value: fc.nat(1000) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('delete' as const), kind, ns, name }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('dropWatches' as const), mode: fc.constantFrom<'end' | 'destroy'>('end', 'destroy') }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('compact' as const), only: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('fail' as const),
      verb: fc.constantFrom<'watch' | 'list'>('watch', 'list'),
      resource: fc.constantFrom<'configmaps' | 'pods'>('configmaps', 'pods'),
      code: fc.constantFrom<429 | 500 | 503>(429, 500, 503),
      times: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('closeSockets' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restartAgent' as const) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('pause' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
);

const ref = (o: { kind: 'cm' | 'pod'; ns: string; name: string }) => ({ apiVersion: 'v1', kind: o.kind === 'cm' ? 'ConfigMap' : 'Pod', namespace: o.ns, name: o.name });

let fixture: CacheFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function apply(f: CacheFixture, o: Op, restart: () => Promise<void>): Promise<void> {
  const store = f.kube.store;
  switch (o.t) {
    case 'upsert':
      store.upsert(o.kind === 'cm' ? configMap(o.ns, o.name, { v: String(o.value) }) : pod(o.ns, o.name, `nginx:${o.value}`));
      return;
    case 'delete':
      if (store.get(ref(o)) !== undefined) store.delete(ref(o));
      return;
    case 'dropWatches':
      f.kube.faults.dropWatches(undefined, o.mode);
      return;
    case 'compact':
      f.kube.faults.compact(undefined, o.only ? { apiVersion: 'v1', kind: 'ConfigMap' } : undefined);
      return;
    case 'fail':
      f.kube.faults.fail({ verb: o.verb, resource: o.resource }, o.code, o.times);
      return;
    case 'closeSockets':
      f.kube.faults.closeSockets();
      return;
    case 'restartAgent':
      await restart();
      return;
    case 'pause':
      await new Promise((r) => setTimeout(r, o.ms));
  }
}

describe('the table converges to the cluster', () => {
  it('after random changes with faults in between', async () => {
    const seed = Number(process.env.CACHE_PROPERTY_SEED ?? Date.now() % 2 ** 31);
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), async (ops) => {
        const f = (fixture = await new CacheFixture().start());
        for (const n of ['a', 'b']) f.kube.store.ensureNamespace(n);
        let agent: CacheAgent = await f.agent({ timing: { backoffInitialMs: 5, backoffMaxMs: 50 } });
        const restart = async () => {
          await agent.stop();
          agent = await f.agent({ timing: { backoffInitialMs: 5, backoffMaxMs: 50 } });
        };
        for (const o of ops) await apply(f, o, restart);
        f.kube.faults.clear();
        await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), { timeout: 20_000, interval: 100 });
        await f.close();
        fixture = undefined;
      }),
      { seed, numRuns: 6, endOnFailure: true, verbose: 1 },
    );
  }, 300_000);
});
