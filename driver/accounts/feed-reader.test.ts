import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../test/support/table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { appendChanges, type Change } from '../../shared/table/accounts/feed.ts';
import { FeedReader } from './feed-reader.ts';

describe('the feed reader against dynalite', () => {
  const tables = useTestTables();

  it('an entry this replica appended itself is not read back; every other replica reads it', async () => {
    const t = await tables.fresh();
    const clock = new ManualClock(1_000_000);
    const writer = new FeedReader(t, clock, 5_000);
    const other = new FeedReader(t, clock, 5_000);
    clock.advance(10);
    const own: Change = { name: 'handed', action: 'assign', generation: 2, at: clock.now() };
    const theirs: Change = { name: 'activated', action: 'assign', generation: 1, at: clock.now() };
    writer.wrote(own);
    await appendChanges(t, [own, theirs]);
    expect(await writer.poll()).toEqual(['activated']);
    expect((await other.poll()).sort()).toEqual(['activated', 'handed']);
    // Read again within the window, neither comes back.
    expect(await writer.poll()).toEqual([]);
    expect(await other.poll()).toEqual([]);
  });
});
