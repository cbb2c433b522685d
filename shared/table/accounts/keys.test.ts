import { describe, expect, it } from 'vitest';
import { ACCOUNT_SHARDS, CHANGE_SHARDS } from '../core/keys.ts';
import { ACCOUNT_PARTITIONS, CHANGE_PARTITIONS, accountKey, accountShard, changeKey, isAccountPartition, isChangePartition } from './keys.ts';

describe('the account shards (docs/table.md#key-layout)', () => {
  it('hash a name to the same shard for ever: FNV-1a, 32 bits, modulo 8', () => {
    // Fixed values: a change of the hash would lose every account item written before it.
    expect(Object.fromEntries(['prod', 'staging', 'local', 'acct-000', 'acct-001', 'a', ''].map((name) => [name, accountShard(name)]))).toEqual({
      prod: 4,
      staging: 6,
      local: 0,
      'acct-000': 7,
      'acct-001': 4,
      a: 4, // FNV-1a of "a" is 0xe40c292c
      '': 5, // the offset basis, 0x811c9dc5
    });
    expect(ACCOUNT_SHARDS).toBe(8);
    expect(CHANGE_SHARDS).toBe(4);
  });

  it("key an account and its feed entries in its shard's partitions, and spread many names over all of them", () => {
    expect(accountKey('prod')).toEqual({ pk: 'ACCOUNT#4', sk: 'prod' });
    expect(changeKey(1234, 'prod', 3)).toEqual({ pk: 'CHANGE#0', sk: '0000000001234#prod#0000000003' });
    expect(changeKey(1234, 'acct-001', 3).pk).toBe('CHANGE#0');
    expect(changeKey(1234, 'staging', 3).pk).toBe('CHANGE#2');
    const names = Array.from({ length: 1000 }, (_, i) => `account-${i}`);
    const perShard = new Map<string, number>();
    for (const name of names) perShard.set(accountKey(name).pk, (perShard.get(accountKey(name).pk) ?? 0) + 1);
    expect([...perShard.keys()].sort()).toEqual([...ACCOUNT_PARTITIONS].sort());
    expect(new Set(names.map((name) => changeKey(0, name, 1).pk))).toEqual(new Set(CHANGE_PARTITIONS));
    // Evenly enough that no shard takes much more than its eighth of the writes.
    for (const n of perShard.values()) expect(n).toBeLessThan(1.25 * (names.length / ACCOUNT_SHARDS));
  });

  it('tell the partitions of the accounts and of the feed from every other', () => {
    expect(ACCOUNT_PARTITIONS.every(isAccountPartition)).toBe(true);
    expect(CHANGE_PARTITIONS.every(isChangePartition)).toBe(true);
    for (const other of ['ACCOUNT', 'CHANGE', 'ACCOUNT#8', 'CHANGE#4', 'CHANGE#', 'ACCESS', 'RANK', 'HELD#a1', undefined, 4]) {
      expect(isAccountPartition(other)).toBe(false);
      expect(isChangePartition(other)).toBe(false);
    }
    expect(isAccountPartition('CHANGE#0')).toBe(false);
    expect(isChangePartition('ACCOUNT#0')).toBe(false);
  });
});
