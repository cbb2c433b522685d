/**
 * The finished operation a replica's answer to a result ask carries (shared/wake/result-answer.ts),
 * believed only when it is signed for the very ask it answers and is that operation, finished; else
 * the waiting request reads the table as for an answer without one.
 */
import * as v from 'valibot';
import { ERROR_CODES } from '../../shared/errors.ts';
import { isFinished, OPERATION_STATES } from '../../shared/operations/model.ts';
import { OPERATION_ACTIONS } from '../../shared/operations/request.ts';
import { MAX_RESULT_ANSWER_BYTES, resultAnswerSigned, type AnsweredOperation } from '../../shared/wake/result-answer.ts';
import { signedJsonBody } from '../../shared/wake/signed-json.ts';
import { objectOutcomeSchema } from '../../shared/answers/operations.ts';

const int = v.pipe(v.number(), v.integer());

const answeredOperationSchema = v.object({
  id: v.string(),
  account: v.string(),
  action: v.picklist(OPERATION_ACTIONS),
  state: v.picklist(OPERATION_STATES),
  attempt: int,
  objects: int,
  idempotencyKey: v.string(),
  timeoutMs: v.optional(int),
  createdAt: int,
  updatedAt: int,
  dispatchedAt: v.optional(int),
  finishedAt: v.optional(int),
  message: v.optional(v.string()),
  errorCode: v.optional(v.picklist(ERROR_CODES)),
  report: v.optional(v.object({ agentId: v.string(), attempt: int, startedAt: int, finishedAt: int, budgetWaitMs: int })),
  outcomes: v.optional(v.array(objectOutcomeSchema)),
  dispatch: v.optional(v.object({ agentId: v.string() })),
});

/**
 * The operation in `body`, when `signature` signs it under `secret` as the answer to the ask `ask` for
 * operation `id`, and it is that operation, finished; undefined for anything else.
 */
export function believedAnswer(secret: string, ask: string, id: string, signature: string | undefined, body: string): AnsweredOperation | undefined {
  if (body.length > MAX_RESULT_ANSWER_BYTES || !resultAnswerSigned(secret, ask, signature, body)) return undefined;
  const answered = signedJsonBody(answeredOperationSchema, body);
  return answered === undefined || answered.id !== id || !isFinished(answered.state) ? undefined : answered;
}
