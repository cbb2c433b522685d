import { BatchWriteItemCommand, type BatchWriteItemCommandInput } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { backoffDelay, type BackoffPolicy } from '../backoff.ts';
import { systemClock } from '../clock.ts';
import { VendorError } from '../errors.ts';
import type { TableRef } from './client.ts';

/** DynamoDB's limit of requests in one BatchWriteItem. */
export const BATCH_WRITE_LIMIT = 25;

/**
 * The wait before sending again what the table left unprocessed: 20 ms, doubling (no cap, as the
 * loops give up after eight tries, the last wait being 2.56 s).
 */
export const UNPROCESSED_BACKOFF: BackoffPolicy = { baseMs: 20, maxMs: Infinity };

/** Sends `request` until nothing is left unprocessed (throttling), with a growing wait between tries. */
async function untilProcessed<R extends object>(request: R | undefined, send: (r: R) => Promise<R | undefined>): Promise<void> {
  for (let attempt = 0; request !== undefined && Object.keys(request).length > 0; attempt++) {
    if (attempt > 8) throw new VendorError('unavailable', 'the table keeps throttling writes');
    if (attempt > 0) await systemClock.sleep(backoffDelay(UNPROCESSED_BACKOFF, attempt));
    request = await send(request);
  }
}

/**
 * Sends one BatchWriteItem and retries what the table left unprocessed (throttling) with a growing
 * wait, so a batch either lands whole or fails with `unavailable`.
 */
export async function batchWrite(t: TableRef, input: BatchWriteCommandInput): Promise<void> {
  await untilProcessed(input.RequestItems, async (r) => (await t.client.send(new BatchWriteCommand({ RequestItems: r }))).UnprocessedItems);
}

/**
 * `batchWrite` for items already in DynamoDB's attribute-value form: the document client's
 * marshalling (a walk of every item) is skipped, for the writes that go out by the thousand.
 */
export async function batchWriteItems(t: TableRef, input: BatchWriteItemCommandInput): Promise<void> {
  await untilProcessed(input.RequestItems, async (r) => (await t.client.send(new BatchWriteItemCommand({ RequestItems: r }))).UnprocessedItems);
}
