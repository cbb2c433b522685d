import { describe, expect, it, vi } from 'vitest';
import type { ResourceChange } from '../../shared/protocol/messages.ts';
import { listResources } from '../../shared/table/resources/objects.ts';
import { useAccountsWorld } from '../../test/support/accounts-world.ts';
import { troubledWorld } from '../../test/support/troubled-table.ts';
import { PER_ACCOUNT_DEFAULTS } from './per-account.ts';

const world = useAccountsWorld();
const WAIT = { timeout: 60_000, interval: 50 };
/** More accounts than cache messages run at once (`running`), so a running place each would stop the rest. */
const STUCK = PER_ACCOUNT_DEFAULTS.running + 8;
const stuck = Array.from({ length: STUCK }, (_, i) => `stuck-${String(i).padStart(2, '0')}`);
const names = [...stuck, 'quick'];

function change(name: string, rv: number): ResourceChange {
  return { group: '', kind: 'ConfigMap', namespace: 'a', name, resourceVersion: String(rv), deleted: false, object: JSON.stringify({ metadata: { name, resourceVersion: String(rv) } }) };
}

/** The world, its troubled table and one agent caching every account. */
async function setUp() {
  const { troubled, agent, driver } = await troubledWorld(world, names);
  const stored = async (account: string) => (await listResources(world.table, account, {}, 10)).items.map((i) => `${i.name}@${i.resourceVersion}`);
  const pauses = async () => (await driver.metrics.registry.getSingleMetricAsString('vendor_driver_cache_stream_pauses_total')).split('\n').filter((l) => !l.startsWith('#') && l.trim() !== '');
  return { agent, troubled, stored, pauses };
}

describe('cache messages of accounts stuck behind their table partitions (docs/cache.md#the-drivers-side)', () => {
  it('leave the stream read for the other accounts while each stuck account fills only its own share', async () => {
    const { agent, troubled, stored, pauses } = await setUp();
    // Accounts each with the four batches an agent keeps unacknowledged at most: more messages than the
    // stream's base bound, fewer accounts than the running places.
    const some = stuck.slice(0, 20);
    expect(some.length * 4).toBeGreaterThan(PER_ACCOUNT_DEFAULTS.perStream);
    expect(some.length).toBeLessThan(PER_ACCOUNT_DEFAULTS.running);
    for (const name of some) troubled.state.trouble.add(name);
    const pending = some.flatMap((name) => [1, 2, 3, 4].map((rv) => agent.changes(name, [change('cm', rv)])));
    await vi.waitFor(() => expect(troubled.state.held).toBe(some.length), WAIT);
    // The stream goes on: quick's batch is taken, stored and acknowledged while the others wait.
    await agent.changes('quick', [change('cm', 1)]);
    // Acknowledged once the writer holds it; written a moment later.
    await vi.waitFor(async () => expect(await stored('quick')).toEqual(['cm@1']), WAIT);
    expect(await stored(some[0]!)).toEqual([]);
    expect(troubled.state.held).toBe(some.length);
    // The stream never stopped for room.
    expect(await pauses()).toEqual([]);
    troubled.release();
    await Promise.all(pending);
    for (const name of some) await vi.waitFor(async () => expect(await stored(name)).toEqual(['cm@4']), WAIT);
  }, 120_000);

  it('stop the stream, and count it, when one account sends more than its share', async () => {
    const { agent, troubled, stored, pauses } = await setUp();
    troubled.state.trouble.add(stuck[0]!);
    const over = PER_ACCOUNT_DEFAULTS.perAccount + 2;
    const pending = Array.from({ length: over }, (_, i) => agent.changes(stuck[0]!, [change('cm', i + 1)]));
    await vi.waitFor(async () => expect(await pauses()).toEqual(['vendor_driver_cache_stream_pauses_total{bound="account"} 1']), WAIT);
    troubled.release();
    await Promise.all(pending);
    await vi.waitFor(async () => expect(await stored(stuck[0]!)).toEqual([`cm@${over}`]), WAIT);
  }, 120_000);

  it('let other accounts run while more accounts than the running places wait out a throttled table', async () => {
    const { agent, troubled, stored } = await setUp();
    troubled.state.throttled = true;
    troubled.release();
    for (const name of stuck) troubled.state.trouble.add(name);
    const pending = stuck.map((name) => agent.changes(name, [change('cm', 1)]));
    // Every stuck account has been refused once: each is in its backoff.
    await vi.waitFor(() => expect(troubled.state.refused).toBeGreaterThanOrEqual(STUCK), WAIT);
    await agent.changes('quick', [change('cm', 1)]);
    await vi.waitFor(async () => expect(await stored('quick')).toEqual(['cm@1']), WAIT);
    troubled.state.trouble.clear();
    await Promise.all(pending);
    for (const name of stuck) await vi.waitFor(async () => expect(await stored(name)).toEqual(['cm@1']), WAIT);
  }, 120_000);
});
