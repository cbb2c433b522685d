/**
 * Times every try of every table request and counts the tries that fail, as an SDK middleware on
 * the driver's table client. It sits at the `deserialize` step, inside the SDK's retry loop
 * (shared/table/client.ts), so a throttled try that the SDK retries is counted even when the retry
 * succeeds: throttling shows before it turns into errors callers see.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../../shared/table/core/client.ts';
import { isTableThrottled, isTableUnavailable } from '../../shared/table/core/unavailable.ts';
import type { DriverMetrics } from './metrics.ts';

const MIDDLEWARE = 'vendorDriverTableMetrics';

/** The metrics each client reports to: several drivers in one process (tests, `npm start`) may share a client. */
const listeners = new WeakMap<DynamoDBDocumentClient, Set<DriverMetrics>>();

/** Which kind of failure a try ended in, as the `type` label says it. */
export function tableErrorType(err: unknown): 'throttled' | 'unavailable' | 'refused' {
  if (isTableThrottled(err)) return 'throttled';
  return isTableUnavailable(err) ? 'unavailable' : 'refused';
}

/** Reports the table's requests to `metrics` until the returned function is called. */
export function instrumentTable(table: TableRef, metrics: DriverMetrics, now: () => number = () => performance.now()): () => void {
  let set = listeners.get(table.client);
  if (set === undefined) {
    const targets = new Set<DriverMetrics>();
    listeners.set(table.client, (set = targets));
    table.client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        const started = now();
        try {
          return await next(args);
        } catch (e) {
          const type = tableErrorType(e);
          for (const m of targets) m.tableErrors.inc({ operation, type });
          throw e;
        } finally {
          const seconds = (now() - started) / 1000;
          for (const m of targets) m.tableRequestDuration.observe({ operation }, seconds);
        }
      },
      { step: 'deserialize', priority: 'high', name: MIDDLEWARE },
    );
  }
  set.add(metrics);
  const targets = set;
  return () => void targets.delete(metrics);
}
