import { PK, PK_PREFIX, type Key } from '../core/keys.ts';

/** Membership of one account name in one definition source: `SOURCE#<sourceId>` / name. */
export function sourcePk(sourceId: string): string {
  return `${PK_PREFIX.source}${sourceId}`;
}

export function sourceMemberKey(sourceId: string, name: string): Key {
  return { pk: sourcePk(sourceId), sk: name };
}

export function sourceLockKey(sourceId: string): Key {
  return { pk: PK.sourceLock, sk: sourceId };
}
