/**
 * An operation as the API serves it (docs/api.md#operations): the OpenAPI document, the web
 * console's types and vendorctl's reading of the answer are all taken from this schema. Only valibot
 * and plain constants here, so the console can type-check against it (functions/console/client/types.ts).
 */
import * as v from 'valibot';
import { integerSchema, timestampSchema as timestamp } from './fields.ts';
import { ERROR_CODES } from '../errors.ts';
import { OBJECT_RESULTS, OPERATION_STATES } from '../operations/model.ts';
import { OPERATION_ACTIONS } from '../operations/request.ts';


export const objectOutcomeSchema = v.object({
  index: integerSchema,
  apiVersion: v.string(),
  kind: v.string(),
  namespace: v.optional(v.string()),
  name: v.string(),
  result: v.picklist(OBJECT_RESULTS),
  message: v.optional(v.string()),
  code: v.optional(integerSchema),
  reason: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  generation: v.optional(integerSchema),
});

/** An operation as GET serves it. Times are RFC 3339 in UTC. */
export const operationViewSchema = v.object({
  id: v.string(),
  account: v.string(),
  action: v.picklist(OPERATION_ACTIONS),
  state: v.picklist(OPERATION_STATES),
  idempotencyKey: v.string(),
  /** Manifests or targets in the request. */
  objects: integerSchema,
  timeoutSeconds: v.optional(integerSchema),
  createdAt: timestamp,
  updatedAt: timestamp,
  dispatchedAt: v.optional(timestamp),
  finishedAt: v.optional(timestamp),
  /** How many times it has been handed to an agent. */
  attempts: integerSchema,
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
  budgetWaitMs: v.optional(integerSchema),
});

export type OperationView = v.InferOutput<typeof operationViewSchema>;

/** A page of `GET /vendor/accounts/{accountId}/operations` (docs/api.md#an-accounts-operations). */
export const accountOperationPageSchema = v.object({
  items: v.array(operationViewSchema),
  next: v.optional(v.pipe(v.string(), v.description('Present when there may be more: pass it as `after` for the next page.'))),
});

export type AccountOperationPage = v.InferOutput<typeof accountOperationPageSchema>;
