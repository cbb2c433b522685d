/**
 * A replica's "finished" answer to a result ask may carry the finished operation (docs/protocol.md#result-asks):
 * the replica that recorded the result has the record its conditional write returned, so the API can
 * answer its waiting request without reading the table. The body is JSON, the fields the operation's
 * view is made of; the `Vendor-Result-Answer` header signs it, with HMAC-SHA256 under the wake secret,
 * together with the ask it answers (the whole `Vendor-Result-Ask` line: its operation id, time, nonce and
 * signature), so an answer cannot be altered, moved to another ask or another operation, or replayed:
 *
 *     Vendor-Result-Answer: vra1 <signature: 64 hex over "vra1\n<the ask line>\n<body>">
 *
 * An answer without a body, or with one the API does not believe, is a plain "finished": the API
 * reads the operation from the table.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Dispatch, OperationRecord } from '../operations/model.ts';

export const RESULT_ANSWER_HEADER = 'vendor-result-answer';
/**
 * The largest body an answer carries. An operation whose record is larger (many outcomes, long
 * messages) is answered "finished" without it and read from the table.
 */
export const MAX_RESULT_ANSWER_BYTES = 32 * 1024;

const VERSION = 'vra1';
const SHAPE = /^vra1 ([0-9a-f]{64})$/;

/** What an answer carries of a finished operation: what its view is made of (functions/operations/view.ts). */
export type AnsweredOperation = Pick<
  OperationRecord,
  'id' | 'account' | 'action' | 'state' | 'attempt' | 'objects' | 'idempotencyKey' | 'timeoutMs' | 'createdAt' | 'updatedAt' | 'dispatchedAt' | 'finishedAt' | 'message' | 'errorCode' | 'report' | 'outcomes'
> & { dispatch?: Pick<Dispatch, 'agentId'> | undefined };

/** The body that answers asks for `op`, once its finish is in the table; undefined when it is over the bound. */
export function resultAnswerBody(op: OperationRecord): string | undefined {
  const answered: AnsweredOperation = {
    id: op.id,
    account: op.account,
    action: op.action,
    state: op.state,
    attempt: op.attempt,
    objects: op.objects,
    idempotencyKey: op.idempotencyKey,
    timeoutMs: op.timeoutMs,
    createdAt: op.createdAt,
    updatedAt: op.updatedAt,
    dispatchedAt: op.dispatchedAt,
    finishedAt: op.finishedAt,
    message: op.message,
    errorCode: op.errorCode,
    report: op.report,
    outcomes: op.outcomes,
    dispatch: op.dispatch === undefined ? undefined : { agentId: op.dispatch.agentId },
  };
  const body = JSON.stringify(answered);
  // Characters first: a body this many characters long is over the bound in any encoding.
  return body.length <= MAX_RESULT_ANSWER_BYTES && Buffer.byteLength(body) <= MAX_RESULT_ANSWER_BYTES ? body : undefined;
}

function sign(secret: string, ask: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`${VERSION}\n${ask}\n${body}`).digest();
}

/** The `Vendor-Result-Answer` header for `body` answering the ask whose header was `ask`. */
export function signResultAnswer(secret: string, ask: string, body: string): string {
  return `${VERSION} ${sign(secret, ask, body).toString('hex')}`;
}

/** Whether `header` signs `body` as the answer to the ask whose header was `ask`. */
export function resultAnswerSigned(secret: string, ask: string, header: string | undefined, body: string): boolean {
  const match = header === undefined ? null : SHAPE.exec(header);
  if (match === null) return false;
  return timingSafeEqual(sign(secret, ask, body), Buffer.from(match[1] as string, 'hex'));
}
