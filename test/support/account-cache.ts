import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../../shared/table/core/client.ts';
import { accountCachePartitions } from '../../shared/table/resources/cleanup.ts';
import { cachePk, podMetricsPk } from '../../shared/table/resources/keys.ts';
import { writeResources, type ResourceWrite } from '../../shared/table/resources/objects.ts';

// An account's cache as the driver leaves it, and a count of what is left of it, for cleanup tests.

/** `objects` cached objects, a scope's progress, the scope set, health and two pod-metrics parts. */
export async function seedCache(t: TableRef, account: string, objects: number, prefix = 'obj'): Promise<void> {
  const writes: ResourceWrite[] = Array.from({ length: objects }, (_, i) => ({
    op: 'put',
    ref: { group: 'apps', kind: 'Deployment', namespace: 'ns', name: `${prefix}-${i}` },
    resourceVersion: String(i),
    object: '{}',
    at: 1,
  }));
  await writeResources(t, account, writes);
  const cache = cachePk(account);
  const metrics = podMetricsPk(account);
  for (const item of [
    { pk: cache, sk: 'SCOPE#deployment#apps#', rv: '9', at: 1 },
    { pk: cache, sk: 'SCOPESET#Deployment#apps#', namespaces: '[""]', at: 1 },
    { pk: cache, sk: 'HEALTH', at: 1 },
    { pk: metrics, sk: 'ns#0000', pods: '[]', at: 1 },
    { pk: metrics, sk: 'ns#0001', pods: '[]', at: 1 },
  ]) {
    await t.client.send(new PutCommand({ TableName: t.tableName, Item: item }));
  }
}

export async function cacheCount(t: TableRef, account: string): Promise<number> {
  let n = 0;
  for (const pk of accountCachePartitions(account)) {
    const out = await t.client.send(new QueryCommand({ TableName: t.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Select: 'COUNT', ConsistentRead: true }));
    n += out.Count ?? 0;
  }
  return n;
}

