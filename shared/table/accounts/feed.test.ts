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
    expect(changeKeysSinceParams('t', cursorAt(5), 1000)).toMatchObject({ ProjectionExpression: 'sk', ConsistentRead: true, Limit: 1000 });
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
    expect(none).toEqual({ changes: [], cursor: rest.cursor });
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
