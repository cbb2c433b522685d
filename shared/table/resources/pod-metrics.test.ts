import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { podMetricsPk } from './keys.ts';
import { NAMESPACE_PART_BYTES, namespaceMetricsItems, podMetrics, replacePodMetrics, type PodUsageRecord } from './pod-metrics.ts';

const tables = useTestTables();

const pod = (namespace: string, i: number): PodUsageRecord => ({
  namespace,
  name: `web-7d9f8c6b5-${String(i).padStart(5, '0')}`,
  timestamp: '2026-11-28T10:00:00Z',
  window: '15s',
  containers: [
    { name: 'app', cpu: `${(i * 7919) % 900}m`, memory: `${(i * 104729) % 900000}Ki` },
    { name: 'istio-proxy', cpu: `${(i * 31) % 90}m`, memory: `${(i * 613) % 90000}Ki` },
  ],
});

describe('pod metrics in the table', () => {
  it('keeps a namespace\'s pods compressed: a reading costs a fraction of its JSON in write units, and reads back the same', async () => {
    const t = await tables.fresh();
    const pods = Array.from({ length: 500 }, (_, i) => pod('shop', i));
    const jsonKb = JSON.stringify(pods).length / 1024;
    const before = tables.meter.snapshot();
    await replacePodMetrics(t, 'prod', [{ namespace: 'shop', pods, at: 1_000 }]);
    const used = tables.meter.since(before);
    // 500 pods of two containers: 106 KB of JSON in two parts, 108 write units as text; compressed, 10.
    expect(jsonKb).toBeGreaterThan(100);
    expect(used.writeUnits).toBeLessThan(jsonKb / 5);
    expect(await podMetrics(t, 'prod')).toEqual({ pods: [...pods].sort((a, b) => a.name.localeCompare(b.name)), at: 1_000 });
  });

  it('splits a namespace into parts by the size of its JSON, each part compressed', () => {
    const pods = Array.from({ length: 1200 }, (_, i) => pod('big', i));
    const items = namespaceMetricsItems('prod', { namespace: 'big', pods, at: 5 });
    expect(items.length).toBe(Math.ceil(JSON.stringify(pods).length / NAMESPACE_PART_BYTES));
    for (const item of items) {
      expect(item.podsGzip).toBeInstanceOf(Uint8Array);
      expect(item).not.toHaveProperty('pods');
    }
  });

  it('reads the JSON text of an item an earlier version wrote, beside compressed ones', async () => {
    const t = await tables.fresh();
    const old = [pod('legacy', 1)];
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: podMetricsPk('prod'), sk: 'legacy#0000', namespace: 'legacy', at: 2_000, pods: JSON.stringify(old) } }));
    await replacePodMetrics(t, 'prod', [{ namespace: 'shop', pods: [pod('shop', 2)], at: 3_000 }]);
    expect(await podMetrics(t, 'prod')).toEqual({ pods: [...old, pod('shop', 2)], at: 3_000 });
    // The next reading of that namespace replaces it with a compressed item.
    await replacePodMetrics(t, 'prod', [{ namespace: 'legacy', pods: old, at: 4_000 }]);
    expect((await podMetrics(t, 'prod')).pods).toEqual([...old, pod('shop', 2)]);
  });
});
