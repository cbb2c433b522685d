/**
 * Operations on the wire (docs/protocol.md, Operations): the stored request as the `Operation` the
 * driver sends, and the agent's `ObjectOutcome`s as the `ObjectOutcomeRecord`s the control plane stores.
 */
import { VendorError, errorCodeOf, type ErrorCode } from '../errors.ts';
import type { ObjectOutcome, ObjectOutcome__Output, ObjectRef, Operation, OperationResult__Output } from '../protocol/messages.ts';
import { OBJECT_RESULTS, type AgentReport, type ObjectOutcomeRecord, type ObjectResult } from './model.ts';
import type { ObjectRefJson, OperationRequest } from './request.ts';

function ref(r: ObjectRefJson): ObjectRef {
  return { apiVersion: r.apiVersion, kind: r.kind, namespace: r.namespace ?? '', name: r.name };
}

/** The largest whole numbers a `uint32` and, as a JavaScript number, a `uint64` field carry unchanged. */
const UINT32_MAX = 2 ** 32 - 1;
const UINT64_EXACT_MAX = Number.MAX_SAFE_INTEGER;

/**
 * `value` when the wire carries it as it is. The encoder would otherwise change it without a word
 * (1e300 or NaN in a `uint32` becomes 0, -1 becomes 2^32 - 1), and the agent, which checks the numbers
 * it gets (docs/operations.md#operations-the-agent-refuses), could not tell a count of 0 it was sent
 * from one that was not: a request that is not what the API stored (the table altered or damaged) is
 * not sent at all.
 */
function onWire(value: number, max: number, field: string): number {
  if (Number.isInteger(value) && value >= 0 && value <= max) return value;
  throw new VendorError('invalid_input', `the stored request cannot be sent: ${field} is ${String(value)}, not a whole number from 0 to ${max}`, {
    issues: [{ path: field, message: `must be a whole number from 0 to ${max}` }],
  });
}

/** The `Operation` for the agent; throws `invalid_input` for a number the wire would change. */
export function operationMessage(id: string, account: string, attempt: number, timeoutMs: number, request: OperationRequest): Operation {
  const base = { operationId: id, account, attempt: onWire(attempt, UINT32_MAX, 'attempt'), timeoutMs: onWire(timeoutMs, UINT64_EXACT_MAX, 'timeoutMs') };
  switch (request.action) {
    case 'deploy':
      return {
        ...base,
        deploy: { manifests: request.manifests.map((m) => JSON.stringify(m)), namespace: request.namespace ?? '', forceConflicts: request.forceConflicts },
      };
    case 'delete':
      return { ...base, delete: { targets: request.targets.map(ref), propagationPolicy: request.propagationPolicy ?? '' } };
    case 'scale':
      return { ...base, scale: { targets: request.targets.map(ref), replicas: onWire(request.replicas, UINT32_MAX, 'scale.replicas') } };
    case 'patch':
      return { ...base, patch: { target: ref(request.target), patchType: request.patchType, patch: JSON.stringify(request.patch) } };
    case 'rolloutRestart':
      return { ...base, rolloutRestart: { targets: request.targets.map(ref) } };
    case 'rolloutUndo':
      return { ...base, rolloutUndo: { target: ref(request.target), toRevision: onWire(request.toRevision ?? 0, UINT64_EXACT_MAX, 'rolloutUndo.toRevision') } };
  }
}

export function outcomeToWire(o: ObjectOutcomeRecord): ObjectOutcome {
  return {
    index: o.index,
    object: { apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace ?? '', name: o.name },
    result: o.result,
    message: o.message ?? '',
    code: o.code ?? 0,
    reason: o.reason ?? '',
    resourceVersion: o.resourceVersion ?? '',
    generation: o.generation ?? 0,
  };
}

function resultOf(value: string): ObjectResult {
  return (OBJECT_RESULTS as readonly string[]).includes(value) ? (value as ObjectResult) : 'failed';
}

export function outcomeFromWire(o: ObjectOutcome__Output): ObjectOutcomeRecord {
  const obj = o.object;
  return {
    index: o.index,
    apiVersion: obj?.apiVersion ?? '',
    kind: obj?.kind ?? '',
    ...(obj?.namespace ? { namespace: obj.namespace } : {}),
    name: obj?.name ?? '',
    result: resultOf(o.result),
    ...(o.message ? { message: o.message } : {}),
    ...(o.code ? { code: o.code } : {}),
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
    ...(o.generation ? { generation: o.generation } : {}),
  };
}

/**
 * The code a result gives its operation's failure, when it is one to keep: only on a failed result,
 * and only one of the project's codes. The agent is a peer the driver does not trust: anything else
 * it sends (a code of a newer agent, a long string) is left out, and the result is taken without it.
 */
export function resultErrorCode(result: Pick<OperationResult__Output, 'ok' | 'errorCode'>): ErrorCode | undefined {
  return result.ok ? undefined : errorCodeOf(result.errorCode);
}

export function reportOf(agentId: string, result: OperationResult__Output): AgentReport {
  return { agentId, attempt: result.attempt, startedAt: result.startedAtMs, finishedAt: result.finishedAtMs, budgetWaitMs: result.budgetWaitMs };
}

/** Results that leave the object as asked. */
export const SUCCESS_RESULTS: ReadonlySet<ObjectResult> = new Set(['created', 'configured', 'deleted', 'absent', 'scaled', 'patched', 'restarted', 'rolledBack', 'unchanged']);
