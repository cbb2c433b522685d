import { ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../../clock.ts';
import { batchWriteAll } from './batch.ts';
import type { TableRef } from './client.ts';
import type { Key } from './keys.ts';
import { TTL_ATTRIBUTE } from './schema.ts';

/**
 * What DynamoDB's TTL does for the embedded table, which has none (docs/table.md, "Expiry on the
 * embedded table"): items whose `expiresAt` (seconds) is a number before now are deleted. DynamoDB
 * does this itself, so only the embedded table's owner runs it.
 */

/** Items one Scan page looks at; its matches go out 25 to a BatchWriteItem before the next page is read. */
export const TTL_SWEEP_PAGE = 500;
export const TTL_SWEEP_INTERVAL_MS = 60_000;

export function expiredItemsParams(tableName: string, nowSeconds: number, startKey?: Key): ScanCommandInput {
  return {
    TableName: tableName,
    FilterExpression: '#ttl < :now',
    ProjectionExpression: 'pk, sk',
    ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
    ExpressionAttributeValues: { ':now': nowSeconds },
    Limit: TTL_SWEEP_PAGE,
    ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
  };
}

/** One sweep of the whole table, a page at a time; answers how many items went. */
export async function sweepExpiredItems(t: TableRef, nowMs: number, signal?: AbortSignal): Promise<number> {
  const nowSeconds = Math.floor(nowMs / 1000);
  let deleted = 0;
  let startKey: Key | undefined;
  do {
    if (signal?.aborted === true) break;
    const out = await t.client.send(new ScanCommand(expiredItemsParams(t.tableName, nowSeconds, startKey)));
    const keys = (out.Items ?? []).map((i) => ({ pk: i.pk as string, sk: i.sk as string }));
    await batchWriteAll(t, keys.map((k) => ({ DeleteRequest: { Key: k } })), 1);
    deleted += keys.length;
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey !== undefined);
  return deleted;
}

export interface TtlSweepOptions {
  clock: Clock;
  /** Between the end of one sweep and the start of the next (default 60 s). */
  intervalMs?: number;
  /** Told of each sweep's failure; the next sweep tries again. */
  onError?: (err: unknown) => void;
}

/** Sweeps every `intervalMs` on the clock until `stop()`, which waits for a sweep under way. */
export function startTtlSweep(t: TableRef, options: TtlSweepOptions): { stop(): Promise<void> } {
  const stopped = new AbortController();
  const interval = options.intervalMs ?? TTL_SWEEP_INTERVAL_MS;
  const running = (async () => {
    while (!stopped.signal.aborted) {
      try {
        await options.clock.sleep(interval, stopped.signal);
      } catch {
        return;
      }
      try {
        await sweepExpiredItems(t, options.clock.now(), stopped.signal);
      } catch (err) {
        options.onError?.(err);
      }
    }
  })();
  return {
    stop: async () => {
      stopped.abort();
      await running;
    },
  };
}
