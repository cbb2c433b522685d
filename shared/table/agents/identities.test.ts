import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import {
  deleteIdentity,
  deleteToken,
  deleteTokenParams,
  getIdentity,
  getToken,
  getTokenParams,
  listIdentities,
  listTokens,
  listTokensParams,
  putIdentity,
  putIdentityParams,
  putToken,
  putTokenParams,
  tokenLive,
  type StoredToken,
} from './identities.ts';

const allow = { zones: ['edge-*'], unzoned: false, agentIds: ['a-*'], staticAccounts: [] };
const token = (tokenId: string, identity: string, incarnation: string, notAfter?: number): StoredToken => ({
  tokenId,
  identity,
  incarnation,
  digest: 'ab'.repeat(32),
  createdAt: 1,
  ...(notAfter === undefined ? {} : { notAfter }),
});

describe('agent identity builders', () => {
  it('keeps the incarnation and creation time of an identity that exists', () => {
    const p = putIdentityParams('T', 'edge', allow, 5, 'inc-1');
    expect(p.Key).toEqual({ pk: 'AGENTIDENTITY', sk: 'edge' });
    expect(p.UpdateExpression).toContain('incarnation = if_not_exists(incarnation, :inc)');
    expect(p.UpdateExpression).toContain('createdAt = if_not_exists(createdAt, :now)');
  });

  it('reads tokens by id with a strongly consistent read, and deletes one only as its identity\'s', () => {
    expect(getTokenParams('T', 'id1')).toEqual({ TableName: 'T', Key: { pk: 'AGENTTOKEN', sk: 'id1' }, ConsistentRead: true });
    expect(deleteTokenParams('T', 'edge', 'id1')).toMatchObject({ ConditionExpression: '#identity = :identity', ExpressionAttributeValues: { ':identity': 'edge' } });
    expect(listTokensParams('T', 'edge').FilterExpression).toBe('#identity = :identity');
    expect(listTokensParams('T').FilterExpression).toBeUndefined();
  });

  it('never replaces a token item, and lets the table drop expired ones a week on', () => {
    const p = putTokenParams('T', token('id1', 'edge', 'i', 1_000));
    expect(p.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(p.Item?.expiresAt).toBe(Math.ceil((1_000 + 7 * 24 * 3600 * 1000) / 1000));
    expect(putTokenParams('T', token('id1', 'edge', 'i')).Item).not.toHaveProperty('expiresAt');
  });

  it('accepts a token only for the incarnation it was issued for and before its expiry', () => {
    const identity = { name: 'edge', incarnation: 'i1', createdAt: 0, updatedAt: 0, ...allow };
    expect(tokenLive(token('t', 'edge', 'i1'), identity, 10)).toBe(true);
    expect(tokenLive(token('t', 'edge', 'i1', 10), identity, 10)).toBe(false);
    expect(tokenLive(token('t', 'edge', 'i1', 11), identity, 10)).toBe(true);
    expect(tokenLive(token('t', 'edge', 'i0'), identity, 10)).toBe(false);
    expect(tokenLive(token('t', 'other', 'i1'), identity, 10)).toBe(false);
    expect(tokenLive(token('t', 'edge', 'i1'), undefined, 10)).toBe(false);
  });
});

describe('agent identities against dynalite', () => {
  const tables = useTestTables();

  it('creates, changes, lists and deletes identities; deleting takes their tokens along', async () => {
    const t = await tables.fresh();
    const created = await putIdentity(t, 'edge', allow, 10, 'inc-1');
    expect(created).toEqual({ name: 'edge', ...allow, incarnation: 'inc-1', createdAt: 10, updatedAt: 10 });
    const changed = await putIdentity(t, 'edge', { ...allow, unzoned: true }, 20, 'inc-2');
    expect(changed).toMatchObject({ incarnation: 'inc-1', createdAt: 10, updatedAt: 20, unzoned: true });
    await putIdentity(t, 'core', allow, 30, 'inc-3');
    expect((await listIdentities(t)).map((i) => i.name)).toEqual(['core', 'edge']);

    expect(await putToken(t, token('tok-a', 'edge', 'inc-1'))).toBe(true);
    expect(await putToken(t, token('tok-a', 'core', 'inc-3'))).toBe(false);
    await putToken(t, token('tok-b', 'core', 'inc-3'));
    expect((await listTokens(t, 'edge')).map((x) => x.tokenId)).toEqual(['tok-a']);
    expect(await deleteToken(t, 'core', 'tok-a')).toBe(false);
    expect(await getToken(t, 'tok-a')).toMatchObject({ identity: 'edge' });

    expect((await deleteIdentity(t, 'edge'))?.name).toBe('edge');
    expect(await getIdentity(t, 'edge')).toBeUndefined();
    expect(await getToken(t, 'tok-a')).toBeUndefined();
    expect((await listTokens(t)).map((x) => x.tokenId)).toEqual(['tok-b']);
    expect(await deleteIdentity(t, 'edge')).toBeUndefined();
  });
});
