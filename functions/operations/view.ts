import type { AnsweredOperation } from '../../shared/wake/result-answer.ts';
import type { OperationView } from '../../shared/answers/operations.ts';

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
