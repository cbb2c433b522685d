import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { resourceSk, scopePrefix } from './keys.ts';
import { listResources, queryResourcesParams, scopeKeys, writeResources, writeResourcesParams, type ResourceWrite } from './objects.ts';

const put = (kind: string, group: string, namespace: string, name: string, rv = '1'): ResourceWrite => ({
  op: 'put',
  ref: { kind, group, namespace, name },
  resourceVersion: rv,
  object: JSON.stringify({ kind, metadata: { name } }),
  at: 5,
});

describe('resource builders', () => {
  it('keys objects by lower-case kind, group, namespace and name', () => {
    expect(resourceSk({ kind: 'Deployment', group: 'apps', namespace: 'shop', name: 'web' })).toBe('deployment#apps#shop#web');
    expect(resourceSk({ kind: 'Node', group: '', namespace: '', name: 'n1' })).toBe('node###n1');
    expect(scopePrefix({ kind: 'Pod', group: '', namespace: '' })).toBe('pod##');
    expect(scopePrefix({ kind: 'Pod', group: '', namespace: 'a' })).toBe('pod##a#');
  });

  it('writes puts and deletes in one BatchWriteItem, at most 25', () => {
    const p = writeResourcesParams('t', 'prod', [put('Pod', '', 'a', 'p'), { op: 'delete', ref: { kind: 'Pod', group: '', namespace: 'a', name: 'q' } }]);
    expect(p.RequestItems?.t).toEqual([
      { PutRequest: { Item: { pk: { S: 'RESOURCE#prod' }, sk: { S: 'pod##a#p' }, ns: { S: 'a' }, name: { S: 'p' }, rv: { S: '1' }, at: { N: '5' }, o: { S: '{"kind":"Pod","metadata":{"name":"p"}}' } } } },
      { DeleteRequest: { Key: { pk: { S: 'RESOURCE#prod' }, sk: { S: 'pod##a#q' } } } },
    ]);
    expect(() => writeResourcesParams('t', 'prod', Array.from({ length: 26 }, (_, i) => put('Pod', '', 'a', `p${i}`)))).toThrow(RangeError);
  });

  it('narrows queries by key as far as the filter allows, the rest by filter expression', () => {
    expect(queryResourcesParams('t', 'prod', {}, 10)).toMatchObject({ KeyConditionExpression: 'pk = :pk', Limit: 10 });
    expect(queryResourcesParams('t', 'prod', { kind: 'Deployment', group: 'apps', namespace: 'shop' }, 10)).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':prefix': 'deployment#apps#shop#' },
    });
    const p = queryResourcesParams('t', 'prod', { kind: 'deployment', namespace: 'shop', name: 'web' }, 10, 'deployment#apps#a#x');
    expect(p.ExpressionAttributeValues).toMatchObject({ ':prefix': 'deployment#', ':ns': 'shop', ':name': 'web' });
    expect(p.FilterExpression).toBe('ns = :ns AND #name = :name');
    expect(p.ExclusiveStartKey).toEqual({ pk: 'RESOURCE#prod', sk: 'deployment#apps#a#x' });
    // A kind and group alone read the kind in every namespace; an empty namespace, its cluster-scoped objects only.
    expect(queryResourcesParams('t', 'prod', { kind: 'Deployment', group: 'apps' }, 10).ExpressionAttributeValues).toMatchObject({ ':prefix': 'deployment#apps#' });
    expect(queryResourcesParams('t', 'prod', { kind: 'Node', group: '', namespace: '' }, 10).ExpressionAttributeValues).toMatchObject({ ':prefix': 'node###' });
  });
});

describe('resources against dynalite', () => {
  const tables = useTestTables();

  it('writes, reads pages in key order and follows filters across pages', async () => {
    const t = await tables.fresh();
    const writes = [
      ...Array.from({ length: 30 }, (_, i) => put('Pod', '', i % 2 === 0 ? 'a' : 'b', `p${String(i).padStart(2, '0')}`)),
      put('Deployment', 'apps', 'a', 'web'),
      put('Deployment', 'example.com', 'a', 'web'),
      put('Node', '', '', 'n1'),
    ];
    await writeResources(t, 'prod', writes);
    const first = await listResources(t, 'prod', { kind: 'pod' }, 10);
    expect(first.items.map((i) => i.name)).toEqual(['p00', 'p02', 'p04', 'p06', 'p08', 'p10', 'p12', 'p14', 'p16', 'p18']);
    // What was written comes back as it was given, cluster-scoped (empty namespace) included.
    expect(first.items[0]).toEqual({ namespace: 'a', name: 'p00', resourceVersion: '1', object: '{"kind":"Pod","metadata":{"name":"p00"}}', updatedAt: 5 });
    expect((await listResources(t, 'prod', { kind: 'node' }, 10)).items).toEqual([{ namespace: '', name: 'n1', resourceVersion: '1', object: '{"kind":"Node","metadata":{"name":"n1"}}', updatedAt: 5 }]);
    const second = await listResources(t, 'prod', { kind: 'pod' }, 10, first.next);
    expect(second.items[0]?.name).toBe('p20');
    const inB = await listResources(t, 'prod', { kind: 'pod', namespace: 'b' }, 100);
    expect(inB.items).toHaveLength(15);
    expect(inB.next).toBeUndefined();
    expect((await listResources(t, 'prod', { kind: 'deployment' }, 10)).items).toHaveLength(2);
    expect((await listResources(t, 'prod', { kind: 'deployment', group: 'apps' }, 10)).items).toHaveLength(1);
    expect((await listResources(t, 'prod', { name: 'web' }, 10)).items).toHaveLength(2);
    expect((await listResources(t, 'prod', {}, 100)).items).toHaveLength(33);
    expect((await listResources(t, 'other', {}, 100)).items).toHaveLength(0);
    expect((await scopeKeys(t, 'prod', scopePrefix({ kind: 'Pod', group: '', namespace: 'a' })))).toHaveLength(15);
  });
});
