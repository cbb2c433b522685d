import { PK, type Key } from '../core/keys.ts';

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
