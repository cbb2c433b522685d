/**
 * An operation as the control plane keeps it: its state, who has it, and what came of it. States move
 * forward only: QUEUED → RUNNING → SUCCEEDED | FAILED | TIMED_OUT. A RUNNING operation may be handed
 * out again (its `attempt` rises) without leaving RUNNING.
 */
import type { ErrorCode } from '../errors.ts';
import type { OperationAction } from './request.ts';

export const OPERATION_STATES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT'] as const;
export type OperationState = (typeof OPERATION_STATES)[number];

export const FINISHED_STATES: readonly OperationState[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT'];

export function isFinished(state: OperationState): boolean {
  return FINISHED_STATES.includes(state);
}

/** Results an object can have (docs/operations.md). */
export const OBJECT_RESULTS = [
  'created',
  'configured',
  'deleted',
  'absent',
  'scaled',
  'patched',
  'restarted',
  'rolledBack',
  'unchanged',
  'failed',
  'skipped',
] as const;
export type ObjectResult = (typeof OBJECT_RESULTS)[number];

/** What happened to one manifest or target. */
export interface ObjectOutcomeRecord {
  index: number;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  result: ObjectResult;
  /** For a failure, the API server's own message. */
  message?: string;
  /** HTTP status of the API server's answer. */
  code?: number;
  reason?: string;
  resourceVersion?: string;
  generation?: number;
}

/** The hand-out of an operation to one agent. */
export interface Dispatch {
  agentId: string;
  sessionId: string;
  replicaId: string;
  /** ms, the dispatching replica's clock. */
  at: number;
  /** Set when the stream it went out on ended before a result: the operation may be handed out again. */
  endedAt?: number;
  endReason?: string;
}

/** What the agent reported, beside the per-object outcomes. */
export interface AgentReport {
  agentId: string;
  attempt: number;
  /** The agent's clock, ms. */
  startedAt: number;
  finishedAt: number;
  budgetWaitMs: number;
}

export interface OperationRecord {
  id: string;
  account: string;
  action: OperationAction;
  state: OperationState;
  /** How many times it has been handed out (0 while never). */
  attempt: number;
  /** Manifests or targets in the request. */
  objects: number;
  /** Who submitted it (`<via>:<subject>` of the API caller), whose Idempotency-Key it is; absent on operations stored before keys were scoped to callers. */
  submittedBy?: string;
  idempotencyKey: string;
  /** SHA-256 of the normalized request: the same key with another request is refused. */
  requestHash: string;
  /** Asked for by the request; the driver's `operations.timeoutMs` otherwise. */
  timeoutMs?: number;
  createdAt: number;
  updatedAt: number;
  dispatch?: Dispatch;
  /** Every agent it was handed to (over all attempts): only their results count. */
  handedTo?: string[];
  dispatchedAt?: number;
  finishedAt?: number;
  /** About the operation as a whole: the agent's summary, why it timed out. */
  message?: string;
  /**
   * The stable code of a failure of the operation as a whole (docs/operations.md#states): absent when
   * it succeeded, is open, or failed for reasons its outcomes give.
   */
  errorCode?: ErrorCode;
  report?: AgentReport;
  outcomes?: ObjectOutcomeRecord[];
}

/** The queue's copy of what the dispatcher decides from, kept beside each open operation. */
export interface QueueEntry {
  id: string;
  account: string;
  state: OperationState;
  attempt: number;
  createdAt: number;
  timeoutMs?: number;
  dispatch?: Dispatch;
  /** Present when the request is stored apart from the operation: its item's key, so a claim reads it alongside. */
  requestHash?: string;
}

export function queueEntryOf(op: OperationRecord): QueueEntry {
  return {
    id: op.id,
    account: op.account,
    state: op.state,
    attempt: op.attempt,
    createdAt: op.createdAt,
    ...(op.timeoutMs === undefined ? {} : { timeoutMs: op.timeoutMs }),
    ...(op.dispatch === undefined ? {} : { dispatch: op.dispatch }),
  };
}
