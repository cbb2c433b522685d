import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { TableRef } from '../core/client.ts';
import { listPrefixAccountPage, prefixRanks } from './name-prefix.ts';
import { rankChange, readDir } from './rank.ts';
import { createAccount } from './records.ts';
import { interceptedTable } from '../../../test/support/intercepted-table.ts';

const tables = useTestTables();

/** Counts the account items each Query returns, to show a page reads only the page. */
function countingItems(t: TableRef): { table: TableRef; read: () => number } {
  let read = 0;
  const table = interceptedTable(t, async (command, send) => {
    const out = (await send(command)) as { Items?: unknown[] };
    if (command instanceof QueryCommand && (command.input.ExpressionAttributeValues as Record<string, unknown>)[':pk'] === 'ACCOUNT') read += out.Items?.length ?? 0;
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
          expect(counting.read()).toBe(want.length);
        }
      }
    }
  });
});
