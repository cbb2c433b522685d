import { PK, PK_PREFIX, type Key } from '../core/keys.ts';

// Keys of the account items and of what is kept beside them: the rank index, the access index and the
// assignment work feed.

export function accountKey(name: string): Key {
  return { pk: PK.account, sk: name };
}

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

export function changeKey(at: number, name: string, generation: number): Key {
  return { pk: PK.change, sk: `${padMs(at)}#${name}#${String(generation).padStart(10, '0')}` };
}
