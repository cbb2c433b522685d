import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../shared/table/core/client.ts';
import { accountKey, changeKey } from '../shared/table/accounts/keys.ts';
import { countWrites, itemBytes, partitionWrites, writeUnits, writtenPartitions, type WritesPerSecond } from './fleet-partitions.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('bench:fleet, where the writes land', () => {
  it('names the partition word of every item a write writes, and nothing for a read', () => {
    expect(writtenPartitions('UpdateItem', JSON.stringify({ Key: { pk: { S: 'ACCOUNT#3' }, sk: { S: 'a' } } }))).toEqual(['ACCOUNT#3']);
    expect(writtenPartitions('PutItem', JSON.stringify({ Item: { pk: { S: 'HELD#agent-1' }, sk: { S: 'a' } } }))).toEqual(['HELD#agent-1']);
    const batch = { RequestItems: { t: [{ PutRequest: { Item: { pk: { S: 'CHANGE#0' } } } }, { PutRequest: { Item: { pk: { S: 'CHANGE#5' } } } }, { DeleteRequest: { Key: { pk: { S: 'HELD#a2' } } } }] } };
    expect(writtenPartitions('BatchWriteItem', JSON.stringify(batch))).toEqual(['CHANGE#0', 'CHANGE#5', 'HELD#a2']);
    expect(writtenPartitions('Query', JSON.stringify({ ExpressionAttributeValues: { ':pk': { S: 'CHANGE#0' } } }))).toEqual([]);
    expect(writtenPartitions('UpdateItem', 'not json')).toEqual([]);
  });

  it('gives each partition word its writes, its busiest second (all its partitions, and the busiest one) and its mean over the window', () => {
    const perSecond: WritesPerSecond = {};
    // The account items' shards: 5 writes in the second from 12 s, but at most 3 in any one shard.
    countWrites(perSecond, 10_100, ['ACCOUNT#0', 'ACCOUNT#0', 'CHANGE#2']);
    countWrites(perSecond, 11_900, ['ACCOUNT#1']);
    countWrites(perSecond, 12_000, ['ACCOUNT#0', 'ACCOUNT#0', 'ACCOUNT#0', 'ACCOUNT#7', 'ACCOUNT#1']);
    countWrites(perSecond, 20_000, ['ACCOUNT#0']); // after the window
    countWrites(perSecond, 11_000, ['HELD#a1', 'HELD#a2', 'HELD#a1']);
    countWrites(perSecond, 12_200, ['HELD#a2']);
    expect(partitionWrites(perSecond, 10_000, 12_500)).toEqual({
      'ACCOUNT#': { writes: 8, partitions: 3, peak_per_second: 5, busiest_partition_peak_per_second: 3, mean_per_second: 3.2 },
      'CHANGE#': { writes: 1, partitions: 1, peak_per_second: 1, busiest_partition_peak_per_second: 1, mean_per_second: 0.4 },
      'HELD#': { writes: 4, partitions: 2, peak_per_second: 3, busiest_partition_peak_per_second: 2, mean_per_second: 1.6 },
    });
  });

  it('sizes an item by DynamoDB rules (names and values) and a write by the kilobyte', () => {
    expect(itemBytes({ pk: { S: 'ACCOUNT#4' }, sk: { S: 'prod' } })).toBe(2 + 9 + 2 + 4);
    expect(itemBytes({ n: { N: '12345' }, b: { BOOL: true } })).toBe(1 + 4 + 1 + 1);
    expect(itemBytes({ m: { M: { a: { S: 'xy' } } } })).toBe(1 + 3 + (1 + 2) + 1);
    expect(writeUnits(200)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
  });

  const children: (() => void)[] = [];
  afterAll(() => children.forEach((stop) => stop()));

  it('counts, in the fleet table process, the items real SDK writes put in each partition', async () => {
    const child = spawn(process.execPath, ['bench/fleet-table.ts'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, BENCH_TABLE_PARTITIONS: '1' } });
    children.push(() => child.kill('SIGTERM'));
    const lines = createInterface({ input: child.stdout });
    const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
    const { endpoint, tableName } = JSON.parse(await next()) as { endpoint: string; tableName: string };
    const db = { client: createDocumentClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }), tableName };
    const from = Date.now();
    await db.client.send(new UpdateCommand({ TableName: tableName, Key: accountKey('a'), UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 1 } }));
    await db.client.send(new BatchWriteCommand({ RequestItems: { [tableName]: [{ PutRequest: { Item: changeKey(1, 'a', 1) } }, { PutRequest: { Item: { pk: 'HELD#agent-1', sk: 'a' } } }] } }));
    const counted = next();
    child.stdin.write('counts\n');
    const { writesPerSecond } = JSON.parse(await counted) as { writesPerSecond: WritesPerSecond };
    expect(partitionWrites(writesPerSecond, from, Date.now())).toEqual({
      'ACCOUNT#': expect.objectContaining({ writes: 1, partitions: 1 }),
      'CHANGE#': expect.objectContaining({ writes: 1, partitions: 1 }),
      'HELD#': expect.objectContaining({ writes: 1 }),
    });
  });
});
