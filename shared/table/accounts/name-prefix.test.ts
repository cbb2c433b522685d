import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import { listPrefixAccountPage, prefixRanks } from './name-prefix.ts';
import { rankChange, readDir } from './rank.ts';
import { createAccount } from './records.ts';
import { isAccountPartition } from './keys.ts';
import { ACCOUNT_SHARDS } from '../core/keys.ts';
import { shardLimit } from '../core/sharded-query.ts';
import { interceptedTable } from '../../../test/support/intercepted-table.ts';

const tables = useTestTables();

/** Keeps the names of the account items each Query returns, to show a page reads only from the page on. */
function countingItems(t: TableRef): { table: TableRef; read: () => string[] } {
  const read: string[] = [];
  const table = interceptedTable(t, async (command, send) => {
    const out = (await send(command)) as { Items?: { sk?: unknown }[] };
    if (command instanceof QueryCommand && isAccountPartition((command.input.ExpressionAttributeValues as Record<string, unknown>)[':pk'])) {
      read.push(...(out.Items ?? []).map((item) => String(item.sk)));
    }
    return out;
  });
  return { table, read: () => read };
}

describe('pages of a name prefix from the rank index', () => {
  it('match the names with the prefix, over many chunks, reading only the page', async () => {
    const t = await tables.fresh();
    const all = ['a', 'b', 'c'].flatMap((group) => Array.from({ length: 40 }, (_, i) => `${group}${String(i).padStart(2, '0')}`)).concat(['b', 'b-x', 'ba']);
    await Promise.all(all.map((name) => createAccount(t, name, 1)));
    await rankChange(t, all, [], { maxChunkNames: 8 });
    expect((await readDir(t, true))!.chunks.length).toBeGreaterThan(10);
    const sorted = [...all].sort();
    for (const prefix of ['a', 'b', 'b0', 'b3', 'c39', 'b-', 'd', '0']) {
      const expected = sorted.filter((n) => n.startsWith(prefix));
      const below = sorted.filter((n) => n < prefix).length;
      expect(await prefixRanks(t, prefix)).toEqual({ first: below, end: below + expected.length });
      for (const limit of [1, 3, 7]) {
        for (let page = 1; page <= Math.ceil(expected.length / limit) + 1; page++) {
          const counting = countingItems(t);
          const got = await listPrefixAccountPage(counting.table, prefix, page, limit);
          const want = expected.slice((page - 1) * limit, page * limit);
          expect({ prefix, limit, page, names: got.records.map((r) => r.name), total: got.total }).toEqual({ prefix, limit, page, names: want, total: expected.length });
          // Each shard is asked for its share of the page after the name before it: nothing before the
          // page is read, and no shard reads more than its share.
          const before = sorted[below + (page - 1) * limit - 1];
          expect(counting.read().filter((name) => before !== undefined && name <= before)).toEqual([]);
          expect(counting.read().length).toBeLessThanOrEqual(ACCOUNT_SHARDS * shardLimit(limit, ACCOUNT_SHARDS));
          expect(counting.read()).toEqual(expect.arrayContaining(want));
        }
      }
    }
  });
});
