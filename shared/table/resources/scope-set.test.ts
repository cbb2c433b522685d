import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { cachePk, SCOPES_SK, type Scope } from './keys.ts';
import { readScopeSet, replaceScopeSet, replaceScopeSetRequests } from './scope-set.ts';
import { scopeSetFits, scopeSetKinds, scopesOf } from './scope-set-kinds.ts';

const pod = (namespace: string): Scope => ({ group: '', kind: 'Pod', namespace });
const deployment = (namespace: string): Scope => ({ group: 'apps', kind: 'Deployment', namespace });

describe('the scope set, one item per kind', () => {
  it('groups scopes by kind, each namespace once and sorted', () => {
    expect(scopeSetKinds([pod('b'), deployment(''), pod('a'), pod('b')])).toEqual([
      { group: '', kind: 'Pod', namespaces: ['a', 'b'] },
      { group: 'apps', kind: 'Deployment', namespaces: [''] },
    ]);
  });

  it('writes only the kinds a new set changes, and deletes the kinds it drops', () => {
    const before = { kinds: scopeSetKinds([pod('a'), deployment('a'), { group: '', kind: 'Secret', namespace: '' }]), single: false };
    const requests = replaceScopeSetRequests('t', 'prod', before, [pod('a'), deployment('b')], 7);
    expect(requests.map((r) => (r.PutRequest ? `put ${r.PutRequest.Item!['sk']} ${r.PutRequest.Item!['namespaces']}` : `delete ${r.DeleteRequest!.Key!['sk']}`))).toEqual([
      'put SCOPESET#Deployment#apps# ["b"]',
      'delete SCOPESET#Secret##',
    ]);
    // The single item of earlier versions goes: every kind is written to its own.
    expect(replaceScopeSetRequests('t', 'prod', { ...before, single: true }, [pod('a')], 7).map((r) => Object.keys(r)[0])).toEqual(['PutRequest', 'DeleteRequest', 'DeleteRequest']);
  });

  it('refuses a kind whose namespaces do not fit one item', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => pod(`${'n'.repeat(58)}${String(i).padStart(5, '0')}`));
    // 66 bytes a namespace in JSON text: 3,900 fit in 256 KiB, 4,000 do not.
    expect(scopeSetFits(many(3900))).toBe(true);
    expect(scopeSetFits(many(4000))).toBe(false);
    expect(scopeSetFits([...many(3900), ...many(3900).map((s) => ({ ...s, kind: 'Secret' }))])).toBe(true);
  });

  describe('against dynalite', () => {
    const tables = useTestTables();

    it('holds 10,000 scopes (200 namespaces of 50 kinds), which one item cannot, and a repeated set writes nothing', async () => {
      const t = await tables.fresh();
      const scopes: Scope[] = [];
      for (let k = 0; k < 50; k++) for (let n = 0; n < 200; n++) scopes.push({ group: 'example.com', kind: `Kind${k}`, namespace: `team-${String(n).padStart(3, '0')}` });
      expect(await readScopeSet(t, 'prod')).toBeUndefined();
      await replaceScopeSet(t, 'prod', undefined, scopes, 1);
      const stored = await readScopeSet(t, 'prod');
      expect(stored?.single).toBe(false);
      expect(new Set(scopesOf(stored!.kinds).map((s) => `${s.kind}/${s.namespace}`))).toEqual(new Set(scopes.map((s) => `${s.kind}/${s.namespace}`)));
      const before = tables.meter.snapshot();
      await replaceScopeSet(t, 'prod', stored, [...scopes].reverse(), 2);
      expect(tables.meter.since(before).writeUnits).toBe(0);
      await replaceScopeSet(t, 'prod', stored, scopes.filter((s) => s.kind !== 'Kind7'), 3);
      expect((await readScopeSet(t, 'prod'))!.kinds.map((k) => k.kind)).not.toContain('Kind7');
      expect((await readScopeSet(t, 'prod'))!.kinds).toHaveLength(49);
    });

    it('reads the single item of earlier versions, and replaces it with an item per kind', async () => {
      const t = await tables.fresh();
      await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: cachePk('prod'), sk: SCOPES_SK, scopes: [pod('a'), pod('b'), deployment('')], at: 1 } }));
      const stored = await readScopeSet(t, 'prod');
      expect(stored).toEqual({ single: true, kinds: [{ group: '', kind: 'Pod', namespaces: ['a', 'b'] }, { group: 'apps', kind: 'Deployment', namespaces: [''] }] });
      await replaceScopeSet(t, 'prod', stored, [pod('a'), deployment('')], 2);
      const after = await readScopeSet(t, 'prod');
      expect(after?.single).toBe(false);
      expect(after?.kinds).toEqual(expect.arrayContaining([{ group: '', kind: 'Pod', namespaces: ['a'] }, { group: 'apps', kind: 'Deployment', namespaces: [''] }]));
      expect(after?.kinds).toHaveLength(2);
    });
  });
});
