/**
 * The `operations` section of `vendor-driver.yml`: how the driver dispatches and times out
 * deployment operations (docs/operations.md).
 */
import * as v from 'valibot';
import { MAX_OPERATION_TIMEOUT_MS } from '../../shared/operations/request.ts';

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));

/**
 * An agent retries an undelivered result `driver.responseRetries.maxRetries` times, `backOffMs`
 * apart (1200 × 3000 ms by default: an hour). The default timeout leaves that hour plus five minutes
 * to run the operation, so an operation does not time out while its result is still on its way.
 */
export const DEFAULT_OPERATION_TIMEOUT_MS = 1200 * 3000 + 5 * 60_000;

export const OperationsConfigSchema = v.strictObject({
  /** An operation without a result this long after it was stored ends TIMED_OUT (a request may ask for another). */
  timeoutMs: v.optional(int(1000, MAX_OPERATION_TIMEOUT_MS), DEFAULT_OPERATION_TIMEOUT_MS),
  /** How often each replica reads the queue of open operations. */
  pollIntervalMs: v.optional(int(10, 60_000), 250),
  /** After the stream an operation went out on ended without its result, wait this long for the agent to come back before handing it to another agent. */
  redispatchAfterMs: v.optional(int(0, 3_600_000), 5000),
  /** An operation handed out by another replica whose agent has no live session there for this long is handed out again (that replica is gone). */
  orphanAfterMs: v.optional(int(1000, 3_600_000), 60_000),
  /** Hand-outs in flight at once per replica (claim and send). */
  concurrency: v.optional(int(1, 256), 32),
});

export type OperationsConfig = v.InferOutput<typeof OperationsConfigSchema>;

/** Joins `vendor-driver.yml` through `driverConfigSchemaWith(operationsSectionEntries)`. */
export const operationsSectionEntries = {
  operations: v.optional(OperationsConfigSchema, {}),
};
