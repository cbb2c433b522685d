import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import { chunksForPage, listAccountPage, listVisibleAccountPage, locateVisiblePage, pageNames, visibleCounts } from './listing.ts';
import { rankChange, readDir, type RankChunk, type RankDir } from './rank.ts';
import { createAccount } from './records.ts';
import { accountKey } from './keys.ts';
import { skewedNames } from '../../../test/support/sharded-items.ts';
import { ACCOUNT_SHARDS } from '../core/keys.ts';

const dir: RankDir = {
  version: 1,
  chunks: [
    { id: 'c0', lo: '', n: 3, v: 1 },
    { id: 'c1', lo: 'd', n: 3, v: 1 },
    { id: 'c2', lo: 'g', n: 3, v: 1 },
  ],
};
const chunkNames = [['a', 'b', 'c'], ['d', 'e', 'f'], ['g', 'h', 'i']];

describe('visible pages, pure parts', () => {
  it('counts what each chunk shows and picks only the chunks a page needs', () => {
    const counts = visibleCounts(dir, ['d', 'e', 'f', 'b']);
    expect(counts).toEqual([2, 0, 3]);
    expect(chunksForPage(counts, 0, 2)).toEqual({ indexes: [0], skip: 0 });
    expect(chunksForPage(counts, 1, 2)).toEqual({ indexes: [0, 2], skip: 1 });
    expect(chunksForPage(counts, 2, 10)).toEqual({ indexes: [2], skip: 0 });
    expect(chunksForPage(counts, 5, 1)).toEqual({ indexes: [], skip: 0 });
  });

  it('walks the chunks read, counting hidden names inside the page in its span', () => {
    const hidden = new Set(['b', 'd', 'e', 'f']);
    const chunks = new Map<number, RankChunk>([
      [0, { id: 'c0', version: 1, names: chunkNames[0] as string[] }],
      [2, { id: 'c2', version: 1, names: chunkNames[2] as string[] }],
    ]);
    // a, [b], c, [d e f] (chunk 1 not read), g
    expect(pageNames(dir, chunks, [0, 2], 0, 3, hidden)).toEqual({ names: ['a', 'c', 'g'], span: 7 });
    expect(pageNames(dir, chunks, [0, 2], 1, 2, hidden)).toEqual({ names: ['c', 'g'], span: 5 });
  });
});

describe('visible pages against dynalite', () => {
  const tables = useTestTables();
  let t: TableRef;
  const all = Array.from({ length: 61 }, (_, i) => `n-${String(i).padStart(3, '0')}`);
  beforeAll(async () => {
    t = await tables.fresh();
    for (const name of all) await createAccount(t, name, 1);
    // Small chunks, so pages cross many of them.
    await rankChange(t, all, [], { maxChunkNames: 6 });
  });

  it('uses several chunks', async () => {
    expect(((await readDir(t, true)) as RankDir).chunks.length).toBeGreaterThan(5);
  });

  it('serves exactly the names not hidden, in order, with their total', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(all),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 1, max: 70 }),
        async (hiddenList, limit, page) => {
          const hidden = new Set(hiddenList);
          const shown = all.filter((n) => !hidden.has(n));
          const { records, total } = await listVisibleAccountPage(t, page, limit, hidden);
          expect(total).toBe(shown.length);
          expect(records.map((r) => r.name)).toEqual(shown.slice((page - 1) * limit, page * limit));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads by key when the page is thin among hidden names, by range otherwise', async () => {
    const itemReadUnits = async (hidden: Set<string>) => {
      let before = tables.meter.snapshot();
      await locateVisiblePage(t, 0, 3, hidden);
      const locate = tables.meter.since(before).readUnits;
      before = tables.meter.snapshot();
      const { records } = await listVisibleAccountPage(t, 1, 3, hidden);
      return { names: records.map((r) => r.name), units: tables.meter.since(before).readUnits - locate };
    };
    const sparse = new Set(all.filter((_, i) => i % 20 !== 0));
    expect(await locateVisiblePage(t, 0, 3, sparse)).toEqual({ total: 4, names: ['n-000', 'n-020', 'n-040'], span: 41 });
    // Three reads by key, each rounded up to a full unit of an eventually consistent read.
    expect(await itemReadUnits(sparse)).toEqual({ names: ['n-000', 'n-020', 'n-040'], units: 1.5 });
    const dense = new Set(all.filter((_, i) => i % 2 === 1));
    expect(await locateVisiblePage(t, 0, 3, dense)).toEqual({ total: 31, names: ['n-000', 'n-002', 'n-004'], span: 5 });
    // A range read of the five small items' names in each shard that holds a name of the page (half a
    // unit each): not more than the reads by key would cost.
    const shards = new Set(['n-000', 'n-002', 'n-004'].map((name) => accountKey(name).pk)).size;
    expect(await itemReadUnits(dense)).toEqual({ names: ['n-000', 'n-002', 'n-004'], units: 0.5 * shards });
  });
});

describe('pages of every account against dynalite', () => {
  const tables = useTestTables();

  it('lists pages in name order with the total, across rank chunks', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 25 }, (_, i) => `acc-${String(i).padStart(2, '0')}`);
    for (const name of [...names].reverse()) {
      await createAccount(t, name, 1);
      await rankChange(t, [name], [], { maxChunkNames: 4 });
    }
    const page2 = await listAccountPage(t, 2, 10);
    expect(page2.total).toBe(25);
    expect(page2.records.map((r) => r.name)).toEqual(names.slice(10, 20));
    expect((await listAccountPage(t, 3, 10)).records.map((r) => r.name)).toEqual(names.slice(20));
    expect((await listAccountPage(t, 4, 10)).records).toEqual([]);
  });

  it('pages through accounts in every shard, each page merged from all of them in name order, every account once', async () => {
    const t = await tables.fresh();
    // Most in one shard, a few in each other: that shard's pages are cut long before the others'.
    const names = skewedNames('s-', 90, 4);
    expect(new Set(names.map((name) => accountKey(name).pk)).size).toBe(ACCOUNT_SHARDS);
    await Promise.all(names.map((name) => createAccount(t, name, 1)));
    await rankChange(t, names, [], { maxChunkNames: 8 });
    // From 40 on, each shard is asked for its share of the page and half again.
    for (const limit of [1, 5, 9, 40, 100, names.length]) {
      const pages: string[][] = [];
      for (let page = 1; page <= Math.ceil(names.length / limit) + 1; page++) {
        const got = await listAccountPage(t, page, limit);
        expect(got.total).toBe(names.length);
        pages.push(got.records.map((r) => r.name));
      }
      expect(pages.map((p) => p.length), `limit ${limit}`).toEqual([...Array.from({ length: Math.ceil(names.length / limit) }, (_, i) => Math.min(limit, names.length - i * limit)), 0]);
      expect(pages.flat(), `limit ${limit}`).toEqual(names);
    }
  });
});
