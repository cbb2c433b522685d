/**
 * Health reaches the table as a scope's state changes (watching or not, failing or working again),
 * not only at the periodic report: with the periodic report ten minutes apart, `/cache` still shows
 * each kind watching once it is, and a kind's error once it fails (docs/cache.md, "Health").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getCacheHealth } from '../../shared/table/resources/health.ts';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap } from '../../test/resource-cache-harness.ts';

let f: CacheFixture;
afterEach(async () => {
  await f.close();
});

/** No periodic report after the first, which runs before any scope has listed. */
const QUIET = { timing: { healthIntervalMs: 600_000, healthMaxAgeMs: 600_000 } };

async function kinds() {
  return (await getCacheHealth(f.table, f.account))?.kinds ?? [];
}

describe('health on a change of state', () => {
  it('shows every kind watching once it is, with no periodic report to carry it', async () => {
    f = await new CacheFixture().start({ watchList: true });
    f.kube.store.ensureNamespace('shop');
    for (let i = 0; i < 5; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
    await f.agent(QUIET);
    await vi.waitFor(async () => {
      await f.written();
      const health = await kinds();
      expect(health.length).toBe(BUILT_IN_KINDS.length);
      expect(health.filter((k) => k.watching !== k.scopes)).toEqual([]);
    }, WAIT);
  });

  it("shows a kind's error once its requests fail, and clears it once they work again", async () => {
    f = await new CacheFixture().start({ watchList: true });
    f.kube.store.ensureNamespace('shop');
    f.kube.store.create(configMap('shop', 'cm-0'));
    await f.agent(QUIET);
    await vi.waitFor(async () => expect((await kinds()).filter((k) => k.watching !== k.scopes)).toEqual([]), WAIT);
    const refusal = f.kube.faults.fail({ resource: 'configmaps' }, 403, 1_000_000);
    f.kube.faults.dropWatches({ resource: 'configmaps' });
    await vi.waitFor(async () => expect((await kinds()).find((k) => k.kind === 'ConfigMap')?.lastError).toMatch(/403|forbidden/i), WAIT);
    f.kube.faults.remove(refusal);
    await vi.waitFor(async () => {
      const configMaps = (await kinds()).find((k) => k.kind === 'ConfigMap');
      expect(configMaps?.lastError).toBeUndefined();
      expect(configMaps?.watching).toBe(configMaps?.scopes);
    }, WAIT);
  });
});
