/**
 * The partitions of the single table (docs/table.md, "Key layout"), every one named here so that no
 * two stores share one. Fixed partitions are words; a partition per account or per source is a
 * prefix and the name after it. Each store builds its own keys from these (`<store>/keys.ts`).
 */
export const PK = {
  /**
   * Where every account item was before the shards (`PK_PREFIX.account`); a driver replica moves what
   * it finds here to its shard at start (shared/table/accounts/shard-move.ts), nothing else reads it.
   */
  unshardedAccount: 'ACCOUNT',
  /** The rank index over account names: a directory item and chunks of sorted names. */
  rank: 'RANK',
  /** Agent sessions, sorted by `<zoneId>#<agentId>`. */
  session: 'SESSION',
  /** Which identity each agent id belongs to, by agent id. */
  agentBinding: 'AGENTID',
  /** The access index: one item per account whose permissions restrict reading, sorted by name. */
  access: 'ACCESS',
  /**
   * Where the operation items, their large requests and their queue entries were before the shards
   * (`PK_PREFIX.operation`, `.operationRequest`, `.operationQueue`); a driver replica moves what it
   * finds here to the shards at start (shared/table/operations/shard-move.ts), nothing else reads them.
   */
  unshardedOperation: 'OPERATION',
  unshardedOperationRequest: 'OPREQUEST',
  unshardedOperationQueue: 'OPQUEUE',
  /** One lock per definition source, by source id: syncs of one source run one at a time. */
  sourceLock: 'SOURCELOCK',
  /** Agent identities (who an agent credential speaks for and what it allows), by name. */
  agentIdentity: 'AGENTIDENTITY',
  /** Tokens issued for agent identities, by token id; only the digest of each token is kept. */
  agentToken: 'AGENTTOKEN',
  /** Accounts whose cached data is still to be deleted after the account went, by account name. */
  cacheCleanup: 'CLEANUP',
} as const;

/**
 * How many partitions the account items are spread over. DynamoDB takes at most 1,000 write units a
 * second per partition, and an activation writes an account item about 4 times: 8 partitions take
 * 8,000 a second, so 10,000 accounts activate in 5 s as far as the partition rate goes, where one
 * partition took 40 s. The price is on the reads: a range read of the list is 8 Queries (one per
 * shard, merged by name) instead of 1 (docs/table.md#where-the-writes-land).
 */
export const ACCOUNT_SHARDS = 8;

/**
 * How many partitions the work feed is spread over. An activation appends about 2 entries per account,
 * half the writes of its item, so half the account shards give the feed the same 2,000 accounts a
 * second; every feed poll queries each of them, so more would cost every idle replica reads for no
 * faster activation. It divides `ACCOUNT_SHARDS`: an account's entries stay in one partition, in order.
 */
export const CHANGE_SHARDS = ACCOUNT_SHARDS / 2;

/**
 * How many partitions the operation items and their large requests are spread over. An operation
 * writes its item about 3 times (created, handed out, finished: 1–2 write units each with a small
 * request inside), so one partition bound the fleet to roughly 200–250 operations a second; 4 take
 * about 1,000. Every read of them names one item by its id, so the shards cost no read
 * (docs/table.md#where-the-operations-writes-land).
 */
export const OPERATION_SHARDS = 4;

/**
 * How many partitions the queue entries are spread over: one. Every replica reads the whole queue
 * every `operations.pollIntervalMs` (250 ms), at rest as under load, one strongly consistent Query per
 * partition: with the queue in 4, that poll doubled the table's Queries per account of an activation in
 * `bench:fleet` (1.6–1.9 against 0.9) and its CPU at rest. The queue takes 2–3 writes of a small entry
 * per operation, so its one partition bounds the fleet to about 330–500 operations a second, above
 * what the operation items' one partition did; raising this spreads it further, for one more Query per
 * poll each, and needs the queue entries moved as at the shards' introduction.
 */
export const OPERATION_QUEUE_SHARDS = 1;

/**
 * Partitions of one account, one source or one shard each: the prefix, then the account name, source
 * id or shard number.
 */
export const PK_PREFIX = {
  /** The account items of one shard (`ACCOUNT_SHARDS`), one item each, sorted by name: `ACCOUNT#<shard>`. */
  account: 'ACCOUNT#',
  /** The assignment work feed of the accounts of one feed shard (`CHANGE_SHARDS`), sorted by time: `CHANGE#<shard>`. */
  change: 'CHANGE#',
  /** Membership of account names in one definition source: `SOURCE#<sourceId>`. */
  source: 'SOURCE#',
  /** The cached objects of one account: `RESOURCE#<account>`. */
  resource: 'RESOURCE#',
  /** The cache's bookkeeping of one account (scope progress, scope set, health): `CACHE#<account>`. */
  cache: 'CACHE#',
  /** The latest pod metrics of one account: `PODMETRICS#<account>`. */
  podMetrics: 'PODMETRICS#',
  /** The operation items of one shard (`OPERATION_SHARDS`), by id: `OPERATION#<shard>`. */
  operation: 'OPERATION#',
  /** The requests too large to keep in their operation item, of one shard, by `<id>#<requestHash>`: `OPREQUEST#<shard>`. */
  operationRequest: 'OPREQUEST#',
  /** The queue entries (one per operation not finished yet) of one shard (`OPERATION_QUEUE_SHARDS`, one), by id: `OPQUEUE#<shard>`. */
  operationQueue: 'OPQUEUE#',
  /** One entry per operation of one account, newest last by creation time: `OPACCOUNT#<account>`. */
  operationByAccount: 'OPACCOUNT#',
  /** The accounts one agent holds, by account name: `HELD#<agentId>`. */
  held: 'HELD#',
} as const;

export interface Key {
  pk: string;
  sk: string;
}

/** The `n` partitions of one sharded space: `<prefix>0` to `<prefix><n - 1>`. */
export function shardPartitions(n: number, prefix: string): readonly string[] {
  return Array.from({ length: n }, (_, k) => `${prefix}${k}`);
}

/** A test of whether a key's `pk` (of any type, as a request carries it) is one of `partitions`. */
export function partitionTest(partitions: readonly string[]): (pk: unknown) => boolean {
  return (pk) => typeof pk === 'string' && partitions.includes(pk);
}
