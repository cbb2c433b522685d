import { PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { accountKey } from './keys.ts';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { AccountState } from '../../accounts/schema.ts';
import type { TableRef } from '../core/client.ts';
import { putAgentStaticAccounts, removeAgentStaticAccounts } from '../sources/agent-static.ts';
import { syncSource } from '../sources/sync.ts';
import { listFacetPage } from './facet-listing.ts';
import { FACET_RANK, facetCounts, facetMatches, facetOf, facetTag, followAccountFacets, parseFacetTag, rebuildFacetIndex, ensureFacetIndex, type FacetFilter } from './facets.ts';
import { readChunk, readDir, rankTotal, taggedRankChange, type RankEntry } from './rank.ts';
import { allAccounts, mutateAccount } from './records.ts';

const tables = useTestTables();

/** Every name of the facet index with its tag, chunk by chunk, and the directory's counts by tag. */
async function indexContents(t: TableRef): Promise<{ tags: Map<string, string>; order: string[]; counts: Map<string, number> }> {
  const dir = await readDir(t, true, FACET_RANK);
  const tags = new Map<string, string>();
  const order: string[] = [];
  for (const entry of dir?.chunks ?? []) {
    const chunk = await readChunk(t, entry.id, true, FACET_RANK);
    chunk?.names.forEach((name, i) => {
      tags.set(name, chunk.tags?.[i] as string);
      order.push(name);
    });
  }
  const counts = new Map<string, number>();
  for (const entry of dir?.chunks ?? []) for (const [tag, n] of Object.entries(entry.c ?? {})) if (n > 0) counts.set(tag, (counts.get(tag) ?? 0) + n);
  return { tags, order, counts };
}

/** What a full scan of the account items says: each name's facet tag. */
async function scanned(t: TableRef): Promise<Map<string, string>> {
  const tags = new Map<string, string>();
  for await (const page of allAccounts(t, 500, { consistent: true })) for (const r of page) tags.set(r.name, facetTag(facetOf(r)));
  return tags;
}

function tally(tags: Map<string, string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tag of tags.values()) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  return counts;
}

/** Every page of a filtered list, `limit` at a time, and the totals each page said. */
async function allPages(t: TableRef, filter: FacetFilter, limit: number): Promise<{ names: string[]; totals: Set<number> }> {
  const names: string[] = [];
  const totals = new Set<number>();
  for (let page = 1; page < 50; page++) {
    const { records, total } = await listFacetPage(t, filter, page, limit);
    totals.add(total);
    if (records.length === 0) break;
    names.push(...records.map((r) => r.name));
  }
  return { names, totals };
}

const NAMES = ['a0', 'a1', 'b0', 'b1', 'c0', 'c1'];
const FILTERS: FacetFilter[] = [
  { states: new Set<AccountState>(['ACTIVE']) },
  { states: new Set<AccountState>(['INACTIVE', 'FAILED']) },
  { zoneId: 'z1' },
  { zoneId: 'z2', sources: new Set(['static-agent-config'] as const) },
  { sources: new Set(['driver'] as const), states: new Set<AccountState>(['ACTIVE', 'INACTIVE']) },
  { namePrefix: 'b', zoneId: 'z1' },
  { namePrefix: 'c' },
];

type Op =
  | { kind: 'driver'; names: string[] }
  | { kind: 'agent'; agent: string; zone: string; names: string[] }
  | { kind: 'agentGone'; agent: string }
  | { kind: 'state'; name: string; state: AccountState | null; zone?: string };

const subset = fc.subarray(NAMES);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('driver' as const), names: subset }),
  fc.record({ kind: fc.constant('agent' as const), agent: fc.constantFrom('ag1', 'ag2'), zone: fc.constantFrom('z1', 'z2'), names: subset }),
  fc.record({ kind: fc.constant('agentGone' as const), agent: fc.constantFrom('ag1', 'ag2') }),
  fc.record(
    { kind: fc.constant('state' as const), name: fc.constantFrom(...NAMES), state: fc.constantFrom<AccountState | null>('INACTIVE', 'ACTIVE', 'FAILED', null), zone: fc.constantFrom('z1', 'z2') },
    { requiredKeys: ['kind', 'name', 'state'] },
  ),
);

/** Applies one write as its writer does: sources sync, the API and the driver change state and registration and follow. */
async function apply(t: TableRef, o: Op, now: number): Promise<void> {
  if (o.kind === 'driver') await syncSource(t, { id: 'driver-config', kind: 'driver-config' }, o.names.map((name) => ({ name })), now);
  else if (o.kind === 'agent') await putAgentStaticAccounts(t, o.agent, o.zone, o.names.map((name) => ({ name })), now);
  else if (o.kind === 'agentGone') await removeAgentStaticAccounts(t, o.agent, now);
  else {
    const { record, changed } = await mutateAccount(
      t,
      o.name,
      () =>
        o.state === null
          ? { registration: null, state: null }
          : { state: o.state, registration: { ...(o.zone === undefined ? {} : { zoneId: o.zone }), at: now } },
      () => now,
    );
    if (changed && record !== undefined) await followAccountFacets(t, [record]);
  }
}

describe('facet index against dynalite', () => {
  it('equals a full scan of the account items after any sequence of writes, in counts, in order and in every filtered page', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
        const t = await tables.fresh();
        // Every name starts defined, so that the state writes find accounts; the ops may take them away.
        await apply(t, { kind: 'driver', names: NAMES }, 999);
        for (const [i, o] of ops.entries()) await apply(t, o, 1_000 + i);
        const expected = await scanned(t);
        const index = await indexContents(t);
        expect(index.tags).toEqual(expected);
        expect(index.order).toEqual([...expected.keys()].sort());
        expect(index.counts).toEqual(tally(expected));
        expect(new Map([...(await facetCounts(t))].filter(([, n]) => n > 0))).toEqual(tally(expected));
        for (const filter of FILTERS) {
          const want = [...expected].filter(([name, tag]) => facetMatches(filter, parseFacetTag(tag)) && name.startsWith(filter.namePrefix ?? '')).map(([n]) => n).sort();
          const got = await allPages(t, filter, 2);
          expect(got.names, JSON.stringify({ ...filter, states: [...(filter.states ?? [])] })).toEqual(want);
          expect(got.totals).toEqual(new Set([want.length]));
        }
      }),
      { numRuns: 15 },
    );
  }, 300_000);

  it('keeps each name with its tag and the counts by tag through splits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,2}$/), fc.option(fc.constantFrom('x', 'y', 'z'), { nil: undefined })), { minLength: 1, maxLength: 30 }),
        async (ops) => {
          const t = await tables.fresh();
          const expected = new Map<string, string>();
          for (const [name, tag] of ops) {
            if (tag === undefined) {
              await taggedRankChange(t, new Map(), [name], { space: FACET_RANK, maxChunkNames: 4 });
              expected.delete(name);
            } else {
              await taggedRankChange(t, new Map([[name, tag]]), [], { space: FACET_RANK, maxChunkNames: 4 });
              expected.set(name, tag);
            }
          }
          const index = await indexContents(t);
          expect(index.tags).toEqual(expected);
          expect(index.order).toEqual([...expected.keys()].sort());
          expect(index.counts).toEqual(tally(expected));
          // The name index is a different space and saw none of it.
          expect(await rankTotal(t)).toBe(0);
        },
      ),
      { numRuns: 12 },
    );
  }, 300_000);

  it('is repaired by a rebuild after a crash between an account write and its index write, or inside an index write', async () => {
    const t = await tables.fresh();
    await syncSource(t, { id: 'driver-config', kind: 'driver-config' }, NAMES.map((name) => ({ name })), 1);
    // A writer that crashed after its account write: the index still says no state.
    await mutateAccount(t, 'b0', () => ({ state: 'ACTIVE', registration: { zoneId: 'z1', at: 2 } }), () => 2);
    expect((await listFacetPage(t, { states: new Set(['ACTIVE'] as const) }, 1, 10)).total).toBe(0);
    // And one that crashed between a chunk write and its directory count.
    const dir = (await readDir(t, true, FACET_RANK))!;
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...FACET_RANK.chunkKey((dir.chunks[0] as RankEntry).id), id: (dir.chunks[0] as RankEntry).id, version: 99, names: ['a0'], tags: [facetTag({ source: 'driver' })] } }));
    expect(await scanned(t)).not.toEqual((await indexContents(t)).tags);

    await rebuildFacetIndex(t);
    const expected = await scanned(t);
    expect((await indexContents(t)).tags).toEqual(expected);
    expect((await indexContents(t)).counts).toEqual(tally(expected));
    const active = await listFacetPage(t, { states: new Set(['ACTIVE'] as const), zoneId: 'z1' }, 1, 10);
    expect(active.records.map((r) => r.name)).toEqual(['b0']);
    expect(active.total).toBe(1);
  });

  it('is built at start-up when missing while accounts exist, and left alone when present', async () => {
    const t = await tables.fresh();
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { ...accountKey('x'), name: 'x', version: 1, generation: 0, defs: {}, agents: {}, updatedAt: 1 } }));
    expect(await ensureFacetIndex(t)).toBe(true);
    expect(await facetCounts(t)).toEqual(new Map([[facetTag({ source: 'driver' }), 1]]));
    expect(await ensureFacetIndex(t)).toBe(false);
  });
});
