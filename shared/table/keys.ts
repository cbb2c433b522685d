/**
 * Key layout of the single table (docs/table.md). Partition values are fixed words; sort keys carry
 * the entity's own identity so that each partition reads in a useful order.
 */
export const PK = {
  /** All accounts, one item each, sorted by name: the GET list reads pages straight from here. */
  account: 'ACCOUNT',
  /** The rank index over account names: a directory item and chunks of sorted names. */
  rank: 'RANK',
  /** Agent sessions, sorted by `<zoneId>#<agentId>`. */
  session: 'SESSION',
  /** Which identity each agent id belongs to, by agent id. */
  agentBinding: 'AGENTID',
  /** The assignment work feed, sorted by time. */
  change: 'CHANGE',
  /** The access index: one item per account whose permissions restrict reading, sorted by name. */
  access: 'ACCESS',
  /** Deployment operations, one item each, by id (a hash of the account and the Idempotency-Key). */
  operation: 'OPERATION',
  /** Requests too large to keep in their operation item, by `<id>#<requestHash>`, written once. */
  operationRequest: 'OPREQUEST',
  /** One entry per operation not finished yet: what the driver replicas dispatch from. */
  operationQueue: 'OPQUEUE',
  /** One lock per definition source, by source id: syncs of one source run one at a time. */
  sourceLock: 'SOURCELOCK',
  /** Agent identities (who an agent credential speaks for and what it allows), by name. */
  agentIdentity: 'AGENTIDENTITY',
  /** Tokens issued for agent identities, by token id; only the digest of each token is kept. */
  agentToken: 'AGENTTOKEN',
} as const;

/** Membership of one account name in one definition source: `SOURCE#<sourceId>` / name. */
export function sourcePk(sourceId: string): string {
  return `SOURCE#${sourceId}`;
}

export interface Key {
  pk: string;
  sk: string;
}

export function accountKey(name: string): Key {
  return { pk: PK.account, sk: name };
}

export function sourceLockKey(sourceId: string): Key {
  return { pk: PK.sourceLock, sk: sourceId };
}

export function sourceMemberKey(sourceId: string, name: string): Key {
  return { pk: sourcePk(sourceId), sk: name };
}

export const RANK_DIR_KEY: Key = { pk: PK.rank, sk: 'DIR' };

export function rankChunkKey(id: string): Key {
  return { pk: PK.rank, sk: `CHUNK#${id}` };
}

export function accessKey(name: string): Key {
  return { pk: PK.access, sk: name };
}

/** Says the access index was built; `#` sorts before every account name, which starts alphanumeric. */
export const ACCESS_BUILT_KEY: Key = { pk: PK.access, sk: '#BUILT' };

export function sessionKey(zoneId: string, agentId: string): Key {
  return { pk: PK.session, sk: `${zoneId}#${agentId}` };
}

export function agentBindingKey(agentId: string): Key {
  return { pk: PK.agentBinding, sk: agentId };
}

/** 13 digits hold every ms timestamp until the year 2286, so string order is time order. */
export function padMs(ms: number): string {
  return String(Math.max(0, Math.trunc(ms))).padStart(13, '0');
}

export function changeKey(at: number, name: string, generation: number): Key {
  return { pk: PK.change, sk: `${padMs(at)}#${name}#${String(generation).padStart(10, '0')}` };
}

export function operationKey(id: string): Key {
  return { pk: PK.operation, sk: id };
}

/** Keyed by the request's hash too: two requests racing for one Idempotency-Key never overwrite each other's. */
export function operationRequestKey(id: string, requestHash: string): Key {
  return { pk: PK.operationRequest, sk: `${id}#${requestHash}` };
}

export function operationQueueKey(id: string): Key {
  return { pk: PK.operationQueue, sk: id };
}

export function agentIdentityKey(name: string): Key {
  return { pk: PK.agentIdentity, sk: name };
}

export function agentTokenKey(tokenId: string): Key {
  return { pk: PK.agentToken, sk: tokenId };
}
