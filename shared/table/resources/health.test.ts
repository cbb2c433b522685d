import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { cachePk, HEALTH_SK } from './keys.ts';
import { getCacheHealth, putCacheHealth, type CacheHealthRecord, type KindHealthRecord } from './health.ts';

const tables = useTestTables();

const kinds = (count: number): KindHealthRecord[] =>
  Array.from({ length: count }, (_, i) => ({ group: i < 20 ? '' : `group${i}.example.com`, kind: `Kind${i}`, scopes: 1, watching: 1, objects: 10 + i, lastEventAt: 1_764_300_000_000 + i, relists: 1, expired: 0 }));

describe('cache health in the table', () => {
  it('keeps the kinds compressed: a report of 60 kinds is one write unit, not 7, and reads back the same', async () => {
    const t = await tables.fresh();
    const report: CacheHealthRecord = { agentId: 'agent-1', cachingEpoch: 3, at: 1_000, kinds: kinds(60) };
    const before = tables.meter.snapshot();
    await putCacheHealth(t, 'prod', report);
    expect(tables.meter.since(before).writeUnits).toBe(1);
    expect(await getCacheHealth(t, 'prod')).toEqual(report);
  });

  it('stores a report of 5,000 kinds, past the 400 KB an item holds as a list', async () => {
    const t = await tables.fresh();
    const report: CacheHealthRecord = { agentId: 'agent-1', cachingEpoch: 1, at: 2_000, kinds: kinds(5000) };
    await putCacheHealth(t, 'prod', report);
    expect((await getCacheHealth(t, 'prod'))?.kinds).toHaveLength(5000);
  });

  it('reads a report an earlier version stored with its kinds as a list', async () => {
    const t = await tables.fresh();
    const report: CacheHealthRecord = { agentId: 'agent-1', cachingEpoch: 2, at: 3_000, kinds: kinds(3) };
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: cachePk('prod'), sk: HEALTH_SK, ...report } }));
    expect(await getCacheHealth(t, 'prod')).toEqual(report);
  });
});
