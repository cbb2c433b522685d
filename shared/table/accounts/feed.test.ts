import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import {
  appendChanges,
  appendChangesParams,
  changeItem,
  changeKeysSince,
  changeKeysSinceParams,
  changesSince,
  cursorAt,
  parseChangeKey,
  pruneChanges,
} from './feed.ts';
import { CHANGE_PARTITIONS, changeKey } from './keys.ts';
import { shardLimit } from '../core/sharded-query.ts';
import fc from 'fast-check';

describe('change builders', () => {
  it('keys entries by zero-padded time, name and generation so string order is time order', () => {
    const item = changeItem({ name: 'prod', action: 'assign', generation: 3, at: 1234 });
    expect(item.sk).toBe('0000000001234#prod#0000000003');
    expect(item.expiresAt).toBe(Math.ceil((1234 + 7 * 24 * 3600 * 1000) / 1000));
    expect(String(changeItem({ name: 'a', action: 'remove', generation: 1, at: 99 }).sk) < String(item.sk)).toBe(true);
    expect(() => appendChangesParams('t', Array.from({ length: 26 }, () => ({ name: 'a', action: 'assign' as const, generation: 1, at: 1 })))).toThrow();
  });

  it('a sort key tells the time, name and generation back, and the keys-only read asks for nothing else', () => {
    const sk = String(changeItem({ name: 'prod.eu-1_a', action: 'assign', generation: 12, at: 1_700_000_000_123 }).sk);
    expect(parseChangeKey(sk)).toEqual({ sk, name: 'prod.eu-1_a', at: 1_700_000_000_123, generation: 12 });
    const queries = changeKeysSinceParams('t', cursorAt(5), 1000);
    // One Query per feed shard, each asked for its share of the page.
    expect(queries.map((q) => q.ExpressionAttributeValues?.[':pk'])).toEqual(CHANGE_PARTITIONS);
    for (const q of queries) {
      expect(q).toMatchObject({ ProjectionExpression: 'sk', ConsistentRead: true, Limit: shardLimit(1000, CHANGE_PARTITIONS.length), KeyConditionExpression: 'pk = :pk AND sk > :cursor' });
    }
  });
});

describe('changes against dynalite', () => {
  const tables = useTestTables();

  it('reads everything since a cursor, in time order, and replays idempotently', async () => {
    const t = await tables.fresh();
    const entries = Array.from({ length: 30 }, (_, i) => ({ name: `acc${i}`, action: 'assign' as const, generation: 1, at: 1000 + i }));
    await appendChanges(t, entries);
    await appendChanges(t, entries.slice(0, 5)); // the same entries again are the same items
    const first = await changesSince(t, cursorAt(0), 20);
    expect(first.changes).toEqual(entries.slice(0, 20));
    const rest = await changesSince(t, first.cursor, 20);
    expect(rest.changes).toEqual(entries.slice(20));
    const none = await changesSince(t, rest.cursor, 20);
    expect(none).toEqual({ changes: [], cursor: rest.cursor, more: false });
    expect((await changesSince(t, cursorAt(1025), 100)).changes.map((c) => c.name)).toEqual(['acc25', 'acc26', 'acc27', 'acc28', 'acc29']);
    // Keys only: the same entries in the same order, and the same cursors.
    const keys = await changeKeysSince(t, cursorAt(0), 20);
    expect(keys.keys.map(({ name, at, generation }) => ({ name, at, generation }))).toEqual(entries.slice(0, 20).map(({ name, at, generation }) => ({ name, at, generation })));
    expect(keys.cursor).toBe(first.cursor);
    expect((await changeKeysSince(t, rest.cursor, 20)).keys).toEqual([]);
  });

  it('prunes entries older than a time', async () => {
    const t = await tables.fresh();
    await appendChanges(t, Array.from({ length: 30 }, (_, i) => ({ name: `a${i}`, action: 'remove' as const, generation: 2, at: i })));
    expect(await pruneChanges(t, 28)).toBe(28);
    expect((await changesSince(t, cursorAt(0), 100)).changes.map((c) => c.at)).toEqual([28, 29]);
  });
});

describe('the feed over its shards against dynalite (docs/table.md#the-assignment-work-feed)', () => {
  const tables = useTestTables();

  it("puts an account's entries in its shard's partition, and the entries of many accounts in every shard", () => {
    const names = Array.from({ length: 64 }, (_, i) => `acct-${i}`);
    const pks = new Set(names.map((name) => changeItem({ name, action: 'assign', generation: 1, at: 5 }).pk));
    expect([...pks].sort()).toEqual([...CHANGE_PARTITIONS].sort());
    expect(changeKey(1, 'prod', 1).pk).toBe(changeKey(99, 'prod', 7).pk);
  });

  it('reads every entry once and in order, page after page from a cursor, whatever the shards hold', async () => {
    const t = await tables.fresh();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        // Entries of a few accounts (so some shards hold many, some none) at a few distinct times, often the same.
        fc.uniqueArray(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'prod', 'staging', 'acct-1', 'acct-2', 'local', 'x9'), at: fc.integer({ min: 1, max: 40 }), generation: fc.integer({ min: 1, max: 3 }) }), {
          selector: (e) => `${e.at}#${e.name}#${e.generation}`,
          maxLength: 120,
          size: 'max',
        }),
        // Small pages, where each shard is asked for the whole page, and larger ones, where each is asked
        // for its share and a busy shard's page is cut before the others'.
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 20 }),
        async (entries, limit, from) => {
          // Each run in a time range of its own in the one table, so runs never see each other's entries.
          const base = 1_000_000 + 1000 * round++;
          const changes = entries.map((e) => ({ ...e, at: base + e.at, action: 'assign' as const }));
          await appendChanges(t, changes);
          const expected = changes
            .filter((c) => c.at > base + from)
            .map((c) => changeKey(c.at, c.name, c.generation).sk)
            .sort();
          const read: string[] = [];
          let cursor = cursorAt(base + from + 1);
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThanOrEqual(expected.length + 1);
            const page = await changeKeysSince(t, cursor, limit);
            expect(page.keys.length).toBeLessThanOrEqual(limit);
            read.push(...page.keys.map((k) => k.sk));
            cursor = page.cursor;
            if (!page.more) break;
          }
          expect(read.filter((sk) => sk < cursorAt(base + 1000))).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });
});
