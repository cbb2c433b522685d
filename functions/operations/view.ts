import * as v from 'valibot';
import { ERROR_CODES } from '../../shared/errors.ts';
import { OBJECT_RESULTS, OPERATION_STATES } from '../../shared/operations/model.ts';
import type { AnsweredOperation } from '../../shared/wake/result-answer.ts';
import { OPERATION_ACTIONS } from '../../shared/operations/request.ts';

const timestamp = v.pipe(v.string(), v.isoTimestamp());

export const objectOutcomeSchema = v.object({
  index: v.pipe(v.number(), v.integer()),
  apiVersion: v.string(),
  kind: v.string(),
  namespace: v.optional(v.string()),
  name: v.string(),
  result: v.picklist(OBJECT_RESULTS),
  message: v.optional(v.string()),
  code: v.optional(v.pipe(v.number(), v.integer())),
  reason: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  generation: v.optional(v.pipe(v.number(), v.integer())),
});

/** An operation as GET serves it. Times are RFC 3339 in UTC. */
export const operationViewSchema = v.object({
  id: v.string(),
  account: v.string(),
  action: v.picklist(OPERATION_ACTIONS),
  state: v.picklist(OPERATION_STATES),
  idempotencyKey: v.string(),
  /** Manifests or targets in the request. */
  objects: v.pipe(v.number(), v.integer()),
  timeoutSeconds: v.optional(v.pipe(v.number(), v.integer())),
  createdAt: timestamp,
  updatedAt: timestamp,
  dispatchedAt: v.optional(timestamp),
  finishedAt: v.optional(timestamp),
  /** How many times it has been handed to an agent. */
  attempts: v.pipe(v.number(), v.integer()),
  /** The agent that has it (RUNNING) or that reported its result. */
  agentId: v.optional(v.string()),
  message: v.optional(v.string()),
  errorCode: v.optional(
    v.pipe(
      v.picklist(ERROR_CODES),
      v.description(
        'The stable code of a failure of the operation as a whole, one of the codes of problem details: `invalid_input` (the agent refused it, or its stored request could not be sent), `timeout` (TIMED_OUT), `internal` (its request is missing from the table). Absent while it is open, when it succeeded, and when its outcomes say why it failed (docs/api.md#operations).',
      ),
    ),
  ),
  /** Per manifest or target, in request order; empty until the operation has a result. */
  outcomes: v.array(objectOutcomeSchema),
  /** From the agent's report: when it ran by its own clock, and how long it waited for its task budget. */
  agentStartedAt: v.optional(timestamp),
  agentFinishedAt: v.optional(timestamp),
  budgetWaitMs: v.optional(v.pipe(v.number(), v.integer())),
});

export type OperationView = v.InferOutput<typeof operationViewSchema>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The view of an operation as the table holds it, or as a replica's answer carries it (the same fields). */
export function toOperationView(op: AnsweredOperation): OperationView {
  const agentId = op.report?.agentId ?? op.dispatch?.agentId;
  return {
    id: op.id,
    account: op.account,
    action: op.action,
    state: op.state,
    idempotencyKey: op.idempotencyKey,
    objects: op.objects,
    ...(op.timeoutMs === undefined ? {} : { timeoutSeconds: Math.round(op.timeoutMs / 1000) }),
    createdAt: iso(op.createdAt),
    updatedAt: iso(op.updatedAt),
    ...(op.dispatchedAt === undefined ? {} : { dispatchedAt: iso(op.dispatchedAt) }),
    ...(op.finishedAt === undefined ? {} : { finishedAt: iso(op.finishedAt) }),
    attempts: op.attempt,
    ...(agentId === undefined ? {} : { agentId }),
    ...(op.message === undefined || op.message === '' ? {} : { message: op.message }),
    ...(op.errorCode === undefined ? {} : { errorCode: op.errorCode }),
    outcomes: op.outcomes ?? [],
    ...(op.report === undefined
      ? {}
      : { agentStartedAt: iso(op.report.startedAt), agentFinishedAt: iso(op.report.finishedAt), budgetWaitMs: op.report.budgetWaitMs }),
  };
}
