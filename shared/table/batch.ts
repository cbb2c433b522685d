import { BatchWriteCommand, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { VendorError } from '../errors.ts';
import type { TableRef } from './client.ts';

/** DynamoDB's limit of requests in one BatchWriteItem. */
export const BATCH_WRITE_LIMIT = 25;

/**
 * Sends one BatchWriteItem and retries what the table left unprocessed (throttling) with a growing
 * wait, so a batch either lands whole or fails with `unavailable`.
 */
export async function batchWrite(t: TableRef, input: BatchWriteCommandInput): Promise<void> {
  let request = input.RequestItems;
  for (let attempt = 0; request !== undefined && Object.keys(request).length > 0; attempt++) {
    if (attempt > 8) throw new VendorError('unavailable', 'the table keeps throttling writes');
    if (attempt > 0) await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
    const out = await t.client.send(new BatchWriteCommand({ RequestItems: request }));
    request = out.UnprocessedItems;
  }
}
