import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeShardPages, shardLimit, shardPageOf, type ShardPage } from './sharded-query.ts';

/**
 * A partition as a Query reads it: its items after `cursor` in order, at most `limit`, and cut earlier
 * when `cutAfter` items fill the 1 MB a page may hold; the table says where it stopped whenever it
 * stopped at a limit (as DynamoDB does, also when nothing follows), or only when more follows (as
 * dynalite may).
 */
function queryShard(sorted: readonly string[], cursor: string, limit: number, cutAfter: number, keyOnLimit: boolean): ShardPage {
  const after = sorted.filter((sk) => sk > cursor);
  const n = Math.min(limit, cutAfter);
  const items = after.slice(0, n).map((sk) => ({ sk }));
  const stopped = after.length > n || (keyOnLimit && items.length === n && n > 0);
  return shardPageOf(items, stopped ? { sk: items.at(-1)?.sk } : undefined, limit);
}

describe('reads merged from several partitions', () => {
  it("a partition's page is cut where the table stopped, or where it filled its limit", () => {
    expect(shardPageOf([{ sk: 'a' }, { sk: 'b' }], undefined, 3)).toEqual({ items: [{ sk: 'a' }, { sk: 'b' }] });
    expect(shardPageOf([{ sk: 'a' }, { sk: 'b' }], undefined, 2)).toEqual({ items: [{ sk: 'a' }, { sk: 'b' }], cutAt: 'b' });
    expect(shardPageOf([{ sk: 'a' }], { pk: 'p', sk: 'a' }, 5)).toEqual({ items: [{ sk: 'a' }], cutAt: 'a' });
  });

  it('merges only up to the lowest cut: past it a partition may hold items that belong in between', () => {
    const pages: ShardPage[] = [
      { items: [{ sk: 'a' }, { sk: 'd' }], cutAt: 'd' },
      { items: [{ sk: 'b' }, { sk: 'c' }, { sk: 'e' }, { sk: 'f' }] },
    ];
    expect(mergeShardPages(pages, 10)).toEqual({ items: [{ sk: 'a' }, { sk: 'b' }, { sk: 'c' }, { sk: 'd' }], more: true, after: 'd' });
    expect(mergeShardPages(pages, 2)).toEqual({ items: [{ sk: 'a' }, { sk: 'b' }], more: true, after: 'b' });
    expect(mergeShardPages([{ items: [{ sk: 'b' }] }, { items: [{ sk: 'a' }] }], 2)).toEqual({ items: [{ sk: 'a' }, { sk: 'b' }], more: false, after: 'b' });
    expect(mergeShardPages([{ items: [] }, { items: [] }], 2)).toEqual({ items: [], more: false, after: undefined });
    // A page cut where the table stopped before any item it returns: every partition is read up to
    // that key, so the reader goes on from there, even with nothing to show.
    expect(mergeShardPages([{ items: [], cutAt: 'c' }, { items: [{ sk: 'd' }] }], 2)).toEqual({ items: [], more: true, after: 'c' });
  });

  it('asks each partition for its share of a page and half again, never more than the page', () => {
    expect(shardLimit(100, 8)).toBe(23);
    expect(shardLimit(1000, 8)).toBe(192);
    expect(shardLimit(3, 8)).toBe(3);
    expect(shardLimit(1, 8)).toBe(1);
    expect(shardLimit(10, 1)).toBe(10);
  });

  it('reading on from the last item read reads every item once, in order, however the partitions cut their pages', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4, unit: fc.constantFrom('a', 'b', 'c', 'd', 'e') }), { maxLength: 80 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.boolean(),
        fc.string({ maxLength: 2, unit: fc.constantFrom('a', 'c', 'e') }),
        (keys, shards, limit, perShard, cutAfter, keyOnLimit, from) => {
          // Items spread over the partitions by a hash of their key, as account names are.
          const partitions = Array.from({ length: shards }, (_, k) => keys.filter((sk) => [...sk].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) % shards === k).sort());
          const read: string[] = [];
          let cursor = from;
          for (let round = 0; ; round++) {
            expect(round).toBeLessThanOrEqual(keys.length + 1);
            const page = mergeShardPages(partitions.map((sorted) => queryShard(sorted, cursor, perShard, cutAfter, keyOnLimit)), limit);
            expect(page.items.length).toBeLessThanOrEqual(limit);
            read.push(...page.items.map((item) => item.sk as string));
            cursor = page.after ?? cursor;
            if (!page.more) break;
          }
          expect(read).toEqual(keys.filter((sk) => sk > from).sort());
        },
      ),
      { numRuns: 500 },
    );
  });
});
