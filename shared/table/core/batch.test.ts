import { BatchGetCommand, type BatchGetCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { BATCH_GET_LIMIT, batchGet } from './batch.ts';
import type { TableRef } from './client.ts';

type Keys = NonNullable<BatchGetCommandInput['RequestItems']>;

/** A table that answers each BatchGetItem with its keys as items, leaving the last key of a first request unprocessed. */
function tableLeavingOneKey(): { table: TableRef; requests: string[][] } {
  const requests: string[][] = [];
  const send = async (command: BatchGetCommand) => {
    const keys = (command.input.RequestItems as Keys).t!.Keys as { sk: string }[];
    const names = keys.map((k) => k.sk);
    requests.push(names);
    const left = requests.length === 1 ? names.slice(-1) : [];
    const read = names.filter((n) => !left.includes(n)).map((sk) => ({ pk: 'P', sk }));
    return { Responses: { t: read }, ...(left.length === 0 ? {} : { UnprocessedKeys: { t: { Keys: left.map((sk) => ({ pk: 'P', sk })) } } }) };
  };
  return { table: { tableName: 't', client: { send } } as unknown as TableRef, requests };
}

describe('batchGet', () => {
  const params = (names: readonly string[]): BatchGetCommandInput => ({ RequestItems: { t: { Keys: names.map((sk) => ({ pk: 'P', sk })) } } });

  it('reads each key once, at most BATCH_GET_LIMIT to a request, and sends what was left unprocessed again', async () => {
    const { table, requests } = tableLeavingOneKey();
    const names = Array.from({ length: BATCH_GET_LIMIT + 10 }, (_, i) => `n${String(i).padStart(3, '0')}`);
    const items = await batchGet(table, [...names, 'n000', 'n001'], params, 'throttled');
    expect(items.map((i) => i.sk).sort()).toEqual(names);
    expect(requests.map((r) => r.length)).toEqual([BATCH_GET_LIMIT, 1, 10]);
    expect(requests[1]).toEqual([names[BATCH_GET_LIMIT - 1]]);
  });
});
