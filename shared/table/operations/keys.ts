import { PK, PK_PREFIX, type Key } from '../core/keys.ts';
import { padMs } from '../accounts/keys.ts';

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

/** The partition of an account's operation entries. */
export function accountOperationsPk(account: string): string {
  return `${PK_PREFIX.operationByAccount}${account}`;
}

/** An account's entry for one operation: by creation time, then id, so a Query reads them newest first. */
export function accountOperationKey(account: string, createdAt: number, id: string): Key {
  return { pk: accountOperationsPk(account), sk: `${padMs(createdAt)}#${id}` };
}
