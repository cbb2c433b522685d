import { ACCOUNT_SHARDS, CHANGE_SHARDS, PK, PK_PREFIX, partitionTest, shardPartitions, type Key } from '../core/keys.ts';

// Keys of the account items and of what is kept beside them: the rank index, the access index and the
// assignment work feed.

/**
 * The shard of an account name: FNV-1a (32 bits) of its UTF-16 code units, modulo `ACCOUNT_SHARDS`.
 * Stable for ever: an item is found only under the shard its name hashes to.
 */
export function accountShard(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % ACCOUNT_SHARDS;
}

/** The partitions of the account items, one per shard: every list read queries them all and merges. */
export const ACCOUNT_PARTITIONS = shardPartitions(ACCOUNT_SHARDS, PK_PREFIX.account);

/** The partitions of the work feed, one per feed shard: every feed poll queries them all and merges. */
export const CHANGE_PARTITIONS = shardPartitions(CHANGE_SHARDS, PK_PREFIX.change);

export function accountKey(name: string): Key {
  return { pk: ACCOUNT_PARTITIONS[accountShard(name)] as string, sk: name };
}

/** Whether `pk` is one of the account items' partitions. */
export const isAccountPartition = partitionTest(ACCOUNT_PARTITIONS);

/** Whether `pk` is one of the work feed's partitions. */
export const isChangePartition = partitionTest(CHANGE_PARTITIONS);

export const RANK_DIR_KEY: Key = { pk: PK.rank, sk: 'DIR' };

export function rankChunkKey(id: string): Key {
  return { pk: PK.rank, sk: `CHUNK#${id}` };
}

/** The facet index (shared/table/accounts/facets.ts) shares the rank partition under its own sort keys. */
export const FACET_DIR_KEY: Key = { pk: PK.rank, sk: 'FACETDIR' };

export function facetChunkKey(id: string): Key {
  return { pk: PK.rank, sk: `FACETCHUNK#${id}` };
}

export function heldKey(agentId: string, account: string): Key {
  return { pk: `${PK_PREFIX.held}${agentId}`, sk: account };
}

export function accessKey(name: string): Key {
  return { pk: PK.access, sk: name };
}

/** Says the access index was built; `#` sorts before every account name, which starts alphanumeric. */
export const ACCESS_BUILT_KEY: Key = { pk: PK.access, sk: '#BUILT' };

/** 13 digits hold every ms timestamp until the year 2286, so string order is time order. */
export function padMs(ms: number): string {
  return String(Math.max(0, Math.trunc(ms))).padStart(13, '0');
}

/** In the feed partition of the name's shard, so an account's entries stay in one partition, in order. */
export function changeKey(at: number, name: string, generation: number): Key {
  return { pk: CHANGE_PARTITIONS[accountShard(name) % CHANGE_SHARDS] as string, sk: `${padMs(at)}#${name}#${String(generation).padStart(10, '0')}` };
}
