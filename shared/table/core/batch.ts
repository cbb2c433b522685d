import { BatchWriteItemCommand, type BatchWriteItemCommandInput } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, type BatchGetCommandInput, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { backoffDelay, type BackoffPolicy } from '../../backoff.ts';
import { systemClock } from '../../clock.ts';
import { VendorError } from '../../errors.ts';
import { runBounded } from './bounded.ts';
import type { TableRef } from './client.ts';

/** DynamoDB's limit of requests in one BatchWriteItem. */
export const BATCH_WRITE_LIMIT = 25;

/**
 * The wait before sending again what the table left unprocessed: 20 ms, doubling (no cap, as the
 * loops give up after eight tries, the last wait being 2.56 s).
 */
export const UNPROCESSED_BACKOFF: BackoffPolicy = { baseMs: 20, maxMs: Infinity };

/** DynamoDB's limit of keys in one BatchGetItem. */
export const BATCH_GET_LIMIT = 100;

/**
 * Sends `request` until nothing is left unprocessed (throttling), with a growing wait between tries;
 * after eight waits it gives up with `unavailable` and `giveUp` as the message.
 */
async function untilProcessed<R extends object>(request: R | undefined, send: (r: R) => Promise<R | undefined>, giveUp: string): Promise<void> {
  for (let attempt = 0; request !== undefined && Object.keys(request).length > 0; attempt++) {
    if (attempt > 8) throw new VendorError('unavailable', giveUp);
    if (attempt > 0) await systemClock.sleep(backoffDelay(UNPROCESSED_BACKOFF, attempt));
    request = await send(request);
  }
}

const WRITES_THROTTLED = 'the table keeps throttling writes';

/**
 * Sends one BatchWriteItem and retries what the table left unprocessed (throttling) with a growing
 * wait, so a batch either lands whole or fails with `unavailable`.
 */
export async function batchWrite(t: TableRef, input: BatchWriteCommandInput): Promise<void> {
  await untilProcessed(input.RequestItems, async (r) => (await t.client.send(new BatchWriteCommand({ RequestItems: r }))).UnprocessedItems, WRITES_THROTTLED);
}

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * Sends any number of plain puts and deletes as BatchWriteItems of `BATCH_WRITE_LIMIT`, at most
 * `concurrency` in flight, each retried as `batchWrite` retries. The requests are unconditional and
 * land in no particular order: for items no other writer changes, or whose writers agree.
 */
export async function batchWriteAll(t: TableRef, requests: readonly WriteRequest[], concurrency: number): Promise<void> {
  const batches: (() => Promise<void>)[] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT) {
    const slice = requests.slice(i, i + BATCH_WRITE_LIMIT);
    batches.push(() => batchWrite(t, { RequestItems: { [t.tableName]: slice } }));
  }
  await runBounded(batches, concurrency);
}

/**
 * `batchWrite` for items already in DynamoDB's attribute-value form: the document client's
 * marshalling (a walk of every item) is skipped, for the writes that go out by the thousand.
 */
export async function batchWriteItems(t: TableRef, input: BatchWriteItemCommandInput): Promise<void> {
  await untilProcessed(input.RequestItems, async (r) => (await t.client.send(new BatchWriteItemCommand({ RequestItems: r }))).UnprocessedItems, WRITES_THROTTLED);
}

/**
 * Reads every key `keysOf` asks for, `BATCH_GET_LIMIT` keys per BatchGetItem, retrying unprocessed keys
 * as `batchWrite` does; answers every item read (each key once, in no particular order).
 */
export async function batchGet<K>(
  t: TableRef,
  keys: readonly K[],
  params: (keys: readonly K[]) => BatchGetCommandInput,
  giveUp: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += BATCH_GET_LIMIT) {
    await untilProcessed(
      params(unique.slice(i, i + BATCH_GET_LIMIT)).RequestItems,
      async (r) => {
        const out = await t.client.send(new BatchGetCommand({ RequestItems: r }));
        items.push(...(out.Responses?.[t.tableName] ?? []));
        return out.UnprocessedKeys;
      },
      giveUp,
    );
  }
  return items;
}
