/**
 * Moving what a table written before the shards keeps in one partition per kind
 * (docs/table.md#moving-a-table-written-before-the-shards,
 * docs/table.md#moving-operations-written-before-the-shards): the account items, then the operations.
 * A driver replica moves them at start, before it serves, and again every
 * `LAYOUT_MOVE_INTERVAL_MS` while it runs: during an update, an API or replica of the earlier layout
 * writes the old partitions until it is replaced, and what it writes then is found within a minute
 * rather than at a replica's next start.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { moveUnshardedAccounts } from './accounts/shard-move.ts';
import type { TableRef } from './core/client.ts';
import { moveUnshardedOperations } from './operations/shard-move.ts';

/**
 * How often a running replica moves again. With nothing to move, each round is four Queries of empty
 * partitions (one of account items, three of operations): about 4 read units a minute per replica.
 */
export const LAYOUT_MOVE_INTERVAL_MS = 60_000;

/** Moves everything the old partitions hold now; logs what it moved, nothing when there was nothing. */
export async function moveEarlierLayout(table: TableRef, log: Logger): Promise<void> {
  const moved = await moveUnshardedAccounts(table);
  if (moved > 0) log.info({ moved }, 'account items moved to their shards');
  const operations = await moveUnshardedOperations(table);
  if (operations.requests + operations.operations + operations.queueEntries > 0) log.info(operations, 'operation items moved to their shards');
}

export interface LayoutMoveLoop {
  /** Ends the loop; resolves once a round under way has ended. */
  stop(): Promise<void>;
}

/**
 * Moves again every `intervalMs` (the first time one interval after the call: the start has just
 * moved), until stopped. A round that fails is logged and the next one tries again.
 */
export function keepMovingEarlierLayout(options: { table: TableRef; log: Logger; clock: Clock; intervalMs?: number | undefined }): LayoutMoveLoop {
  const stopped = new AbortController();
  const intervalMs = options.intervalMs ?? LAYOUT_MOVE_INTERVAL_MS;
  const loop = (async () => {
    for (;;) {
      try {
        await options.clock.sleep(intervalMs, stopped.signal);
      } catch {
        return;
      }
      await moveEarlierLayout(options.table, options.log).catch((e: unknown) =>
        options.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'items of the earlier key layout not moved; trying again at the next round'),
      );
    }
  })();
  return {
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}
