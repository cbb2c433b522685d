import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { accountKey } from './keys.ts';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import {
  chunkAtRank,
  chunkIndexFor,
  childChunkId,
  ensureRankIndex,
  changedContents,
  locatePage,
  putRankChunkParams,
  rankChange,
  rankTotal,
  rebuildRankIndex,
  setRankCountParams,
} from './rank.ts';

describe('rank index builders', () => {
  it('finds the chunk whose range holds a name', () => {
    const chunks = [
      { id: 'a', lo: '', n: 2, v: 1 },
      { id: 'b', lo: 'm', n: 3, v: 1 },
    ];
    expect(chunkIndexFor(chunks, 'a')).toBe(0);
    expect(chunkIndexFor(chunks, 'm')).toBe(1);
    expect(chunkIndexFor(chunks, 'z')).toBe(1);
    expect(chunkIndexFor([{ id: 'x', lo: '', n: 0, v: 1 }], 'q')).toBe(0);
    expect(chunkAtRank({ version: 1, chunks }, 1)).toEqual({ index: 0, first: 0 });
    expect(chunkAtRank({ version: 1, chunks }, 2)).toEqual({ index: 1, first: 2 });
    expect(chunkAtRank({ version: 1, chunks }, 5)).toBeUndefined();
  });

  it('finds, for any directory and name, the last chunk whose lower bound is not above the name', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 3 });
    fc.assert(
      fc.property(fc.uniqueArray(name.filter((n) => n !== ''), { maxLength: 12 }), name, (bounds, probe) => {
        const chunks = ['', ...bounds.sort()].map((lo, i) => ({ id: `c${i}`, lo, n: 1, v: 1 }));
        const expected = chunks.reduce((found, c, i) => (c.lo <= probe ? i : found), 0);
        expect(chunkIndexFor(chunks, probe)).toBe(expected);
      }),
    );
  });

  it('inserts in sorted position, retags and removes, and derives stable child ids', () => {
    expect(changedContents({ names: ['a', 'c'] }, { add: ['b'], remove: [] }, new Map())).toEqual({ names: ['a', 'b', 'c'] });
    expect(changedContents({ names: [] }, { add: ['x'], remove: [] }, new Map())).toEqual({ names: ['x'] });
    expect(changedContents({ names: ['a', 'c'] }, { add: ['a'], remove: ['z'] }, new Map())).toBeUndefined();
    const tagged = { names: ['a', 'c'], tags: ['t1', 't2'] };
    expect(changedContents(tagged, { add: ['a'], remove: [] }, new Map([['a', 't1']]))).toBeUndefined();
    expect(changedContents(tagged, { add: ['a', 'b'], remove: ['c'] }, new Map([['a', 't3'], ['b', 't1']]))).toEqual({ names: ['a', 'b'], tags: ['t3', 't1'] });
    expect(childChunkId('p', 0)).toBe(childChunkId('p', 0));
    expect(childChunkId('p', 0)).not.toBe(childChunkId('p', 1));
  });

  it('conditions chunk writes on the version and count updates on moving forward', () => {
    const put = putRankChunkParams('t', { id: 'c1', version: 4, names: ['a'] }, 3);
    expect(put.ConditionExpression).toBe('version = :expected AND attribute_not_exists(retired)');
    expect(put.Item).toMatchObject({ pk: 'RANK', sk: 'CHUNK#c1', version: 4 });
    const count = setRankCountParams('t', 2, { id: 'c1', version: 4, names: ['a', 'b'] });
    expect(count.UpdateExpression).toContain('chunks[2].n = :n');
    expect(count.ConditionExpression).toBe('chunks[2].id = :id AND chunks[2].v < :v');
    expect(count.ExpressionAttributeValues).toMatchObject({ ':n': 2, ':v': 4, ':id': 'c1' });
  });
});

describe('rank index against dynalite', () => {
  // Each case gets its own table inside one dynalite, so cases never see each other's index.
  const tables = useTestTables();

  async function startOf(t: TableRef, offset: number): Promise<string | undefined> {
    return (await locatePage(t, offset)).startAfter;
  }

  it('tracks adds and removes, splitting chunks, and locates every page start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.stringMatching(/^[a-z]{1,3}$/)), { minLength: 1, maxLength: 40 }),
        async (ops) => {
          const t = await tables.fresh();
          const expected = new Set<string>();
          for (const [add, name] of ops) {
            if (add) {
              await rankChange(t, [name], [], { maxChunkNames: 4 });
              expected.add(name);
            } else {
              await rankChange(t, [], [name], { maxChunkNames: 4 });
              expected.delete(name);
            }
          }
          const sorted = [...expected].sort();
          expect(await rankTotal(t)).toBe(sorted.length);
          for (let offset = 1; offset < sorted.length; offset++) {
            expect(await startOf(t, offset)).toBe(sorted[offset - 1]);
          }
          expect((await locatePage(t, sorted.length)).pastEnd).toBe(true);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('adds and removes a batch in one call, splitting a chunk into several', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 30 }, (_, i) => `b${String(i).padStart(3, '0')}`);
    await rankChange(t, names, [], { maxChunkNames: 6 });
    expect(await rankTotal(t)).toBe(30);
    for (let offset = 1; offset < 30; offset += 4) expect(await startOf(t, offset)).toBe(names[offset - 1]);
    await rankChange(t, [], names.filter((_, i) => i % 2 === 0), { maxChunkNames: 6 });
    expect(await rankTotal(t)).toBe(15);
    expect(await startOf(t, 3)).toBe('b005');
  });

  it('keeps every name when many writers add at once', async () => {
    const t = await tables.fresh();
    const names = Array.from({ length: 16 }, (_, i) => `n${String(i).padStart(3, '0')}`);
    await Promise.all(names.map((name) => rankChange(t, [name], [], { maxChunkNames: 4 })));
    expect(await rankTotal(t)).toBe(16);
    for (let offset = 1; offset < 16; offset += 3) expect(await startOf(t, offset)).toBe(names[offset - 1]);
    // Split parents are deleted once their children are in the directory.
    const chunks = await t.client.send(
      new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'RANK' } }),
    );
    const names2 = (chunks.Items ?? []).filter((i) => i.sk !== 'DIR').flatMap((i) => i.names as string[]);
    expect(names2.sort()).toEqual(names);
  });

  it('rebuilds a missing directory when accounts exist, and leaves a present one alone', async () => {
    const t = await tables.fresh();
    expect(await ensureRankIndex(t)).toBe(false);
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: accountKey('x') }));
    expect(await ensureRankIndex(t)).toBe(true);
    expect(await rankTotal(t)).toBe(1);
    expect(await ensureRankIndex(t)).toBe(false);
  });

  it('rebuilds from the account items', async () => {
    const t = await tables.fresh();
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    for (const name of ['b', 'a', 'c']) {
      await t.client.send(new PutCommand({ TableName: t.tableName, Item: accountKey(name) }));
    }
    await rankChange(t, ['stale'], []);
    expect(await rebuildRankIndex(t)).toEqual({ total: 3, chunks: 1 });
    expect(await rankTotal(t)).toBe(3);
    expect(await startOf(t, 2)).toBe('b');
  });
});
