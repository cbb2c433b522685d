/**
 * An operation of an account as the API describes it in a reservation ask (shared/wake/reserve-ask.ts):
 * a ConfigMap deployed by `admin:test`, its request compressed and hashed as the API's store does,
 * with the id the table derives for it. The suites of reservations and of the wake port make theirs here.
 */
import { randomUUID } from 'node:crypto';
import { requestHash } from '../../shared/operations/hash.ts';
import { compress, operationIdOf } from '../../shared/table/operations/operations.ts';
import type { ReservedOperation } from '../../shared/wake/reserve-ask.ts';

/** `data`: the ConfigMap's data (`{ a: '1' }` by default). */
export function reservedOperation(name: string, options: { account?: string; key?: string; data?: Record<string, string> } = {}): { id: string; operation: ReservedOperation } {
  const account = options.account ?? 'prod';
  const key = options.key ?? randomUUID();
  const request = { action: 'deploy' as const, manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: options.data ?? { a: '1' } }] };
  const operation: ReservedOperation = {
    account,
    submittedBy: 'admin:test',
    idempotencyKey: key,
    requestHash: requestHash(account, request),
    record: { action: 'deploy', objects: 1 },
    now: Date.now(),
    request: Buffer.from(compress(request)).toString('base64'),
  };
  return { id: operationIdOf(account, 'admin:test', key), operation };
}
