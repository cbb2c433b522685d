import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import { syncSource } from '../sources/sync.ts';
import { agentsWhoseHoldingChanged, followHeldAccounts, holdersOf, readHeldAccounts, rebuildHeldAccounts } from './held.ts';
import { allAccounts, mutateAccount, type AccountChanges } from './records.ts';

const tables = useTestTables();
const NAMES = ['a', 'b', 'c', 'd'];
const AGENTS = ['ag1', 'ag2', 'ag3'];

/** What a full scan of the account items says each agent holds. */
async function scanned(t: TableRef): Promise<Map<string, { name: string; caching: boolean }[]>> {
  const held = new Map(AGENTS.map((a) => [a, [] as { name: string; caching: boolean }[]]));
  for await (const page of allAccounts(t, 500, { consistent: true })) {
    for (const record of page) for (const [agentId, caching] of holdersOf(record, AGENTS)) if (caching !== undefined) held.get(agentId)?.push({ name: record.name, caching });
  }
  return held;
}

async function indexed(t: TableRef): Promise<Map<string, { name: string; caching: boolean }[]>> {
  return new Map(await Promise.all(AGENTS.map(async (a) => [a, await readHeldAccounts(t, a)] as const)));
}

type Op = { kind: 'define'; names: string[] } | { kind: 'result'; name: string; agentId: string; ok: boolean; caching: boolean; removing: boolean } | { kind: 'drop'; name: string; agentId: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('define' as const), names: fc.subarray(NAMES) }),
  fc.record({ kind: fc.constant('result' as const), name: fc.constantFrom(...NAMES), agentId: fc.constantFrom(...AGENTS), ok: fc.boolean(), caching: fc.boolean(), removing: fc.boolean() }),
  fc.record({ kind: fc.constant('drop' as const), name: fc.constantFrom(...NAMES), agentId: fc.constantFrom(...AGENTS) }),
);

/** As the driver writes an agent's result or drops its entry, and follows; the source sync deletes accounts. */
async function apply(t: TableRef, o: Op, now: number, follow: boolean): Promise<void> {
  if (o.kind === 'define') {
    await syncSource(t, { id: 'driver-config', kind: 'driver-config' }, o.names.map((name) => ({ name })), now);
    return;
  }
  const changes: AccountChanges =
    o.kind === 'result'
      ? { setAgents: [{ agentId: o.agentId, ok: o.ok, caching: o.caching, ...(o.removing ? { removing: true } : {}), at: now }] }
      : { removeAgents: [o.agentId] };
  const { record, changed } = await mutateAccount(t, o.name, () => changes, () => now);
  if (follow && changed && record !== undefined) await followHeldAccounts(t, [{ record, agentIds: [o.agentId] }]);
}

describe('held index against dynalite', () => {
  it('equals a full scan of the account items after any sequence of results, drops and deletions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (ops) => {
        const t = await tables.fresh();
        await apply(t, { kind: 'define', names: NAMES }, 999, true);
        for (const [i, o] of ops.entries()) await apply(t, o, 1_000 + i, true);
        expect(await indexed(t)).toEqual(await scanned(t));
      }),
      { numRuns: 15 },
    );
  }, 300_000);

  it('is repaired by a rebuild after a crash between the item write and its entries', async () => {
    const t = await tables.fresh();
    await apply(t, { kind: 'define', names: NAMES }, 1, true);
    await apply(t, { kind: 'result', name: 'a', agentId: 'ag1', ok: true, caching: true, removing: false }, 2, true);
    await apply(t, { kind: 'result', name: 'b', agentId: 'ag1', ok: true, caching: false, removing: false }, 3, false);
    await apply(t, { kind: 'drop', name: 'a', agentId: 'ag1' }, 4, false);
    expect(await indexed(t)).not.toEqual(await scanned(t));
    await rebuildHeldAccounts(t, AGENTS);
    expect(await indexed(t)).toEqual(await scanned(t));
    expect(await readHeldAccounts(t, 'ag1')).toEqual([{ name: 'b', caching: false }]);
  });
});

describe('agentsWhoseHoldingChanged', () => {
  const base = { name: 'prod', version: 1, generation: 1, defs: {}, updatedAt: 0 };
  const entry = (agentId: string, ok: boolean, caching = false, removing = false) => ({ agentId, ok, caching, assigned: 1, generation: 1, at: 0, ...(removing ? { removing } : {}) });
  it('names only the agents whose holding (held or not, caching or not) the write changed', () => {
    const before = { ...base, agents: { a: entry('a', false), b: entry('b', true), c: entry('c', true) } };
    const after = { ...base, agents: { a: entry('a', false, true), b: entry('b', true, true), c: entry('c', false, false, true), d: entry('d', true) } };
    // a: a hand-out that elected it: still not held; b: now caches; c: being removed; d: new and held.
    expect(agentsWhoseHoldingChanged(before, after, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd']);
    expect(agentsWhoseHoldingChanged(after, undefined, ['a', 'b'])).toEqual(['b']);
  });
});
