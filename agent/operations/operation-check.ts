/**
 * The agent's own check of an `operation` message, before anything of it is used (docs/operations.md#operations-the-agent-refuses).
 * The decoder guarantees field types only: a 64-bit field past 2^53 - 1 arrives rounded, a 32-bit
 * one may hold what a negative number became on the wire, and an action of a newer protocol arrives
 * as none. Each number is held to the bound the API and the driver keep to, so what the agent's
 * code does with it (deadlines, counts, revisions) stays in the range it was written for.
 *
 * A bad operation costs that operation only: one that can be answered (its id, account and attempt
 * are what the driver accepts in a result) is answered as failed with the code `invalid_input` and
 * the fields named; one that cannot is dropped. Either way the stream stays up.
 */
import * as v from 'valibot';
import { VendorError, type Issue } from '../../shared/errors.ts';
import { MAX_OPERATION_TIMEOUT_MS, MAX_REPLICAS, MAX_REVISION, OPERATION_ACTIONS } from '../../shared/operations/request.ts';
import type { Operation__Output } from '../../shared/protocol/messages.ts';
import { protocolIdSchema, protocolPositiveSchema } from '../../shared/protocol/validate.ts';

const upTo = (max: number) =>
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'), v.maxValue(max, `must be at most ${max}`));

/** What names the result: without it there is nothing the driver would take as an answer. */
const answerableSchema = v.looseObject({ operationId: protocolIdSchema, account: protocolIdSchema, attempt: protocolPositiveSchema });

const operationSchema = v.looseObject({
  /** 0: no limit. */
  timeoutMs: upTo(MAX_OPERATION_TIMEOUT_MS),
  // An action of a newer protocol decodes as none at all.
  action: v.pipe(
    v.optional(v.string(), ''),
    v.check((a) => (OPERATION_ACTIONS as readonly string[]).includes(a), 'names no action this agent knows; the operation may be newer than this agent'),
  ),
  scale: v.nullish(v.looseObject({ replicas: upTo(MAX_REPLICAS) })),
  rolloutUndo: v.nullish(v.looseObject({ toRevision: upTo(MAX_REVISION) })),
});

export type OperationCheck =
  | { verdict: 'run' }
  /** Answered as failed with `error`. */
  | { verdict: 'refuse'; error: VendorError }
  /** Dropped: no result could name it. */
  | { verdict: 'drop'; error: VendorError };

function refusal(issues: readonly v.BaseIssue<unknown>[]): VendorError {
  const named: Issue[] = issues.map((i) => ({ path: v.getDotPath(i) ?? '(root)', message: i.message }));
  return new VendorError('invalid_input', `the operation is invalid: ${named.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues: named });
}

/** Whether the agent may run `op`, and if not, what it answers. */
export function checkOperationMessage(op: Operation__Output): OperationCheck {
  const answerable = v.safeParse(answerableSchema, op, { abortEarly: false });
  if (!answerable.success) return { verdict: 'drop', error: refusal(answerable.issues) };
  const checked = v.safeParse(operationSchema, op, { abortEarly: false });
  return checked.success ? { verdict: 'run' } : { verdict: 'refuse', error: refusal(checked.issues) };
}

/** The result's message for a refused operation: the code first, then what is wrong (fields, bounds; never contents). */
export function refusalMessage(error: VendorError): string {
  return `${error.code}: ${error.message}`;
}
