/**
 * Operations on the wire (docs/protocol.md, Operations): the stored request as the `Operation` the
 * driver sends, and the agent's `ObjectOutcome`s as the `ObjectOutcomeRecord`s the control plane stores.
 */
import type { ObjectOutcome, ObjectOutcome__Output, ObjectRef, Operation, OperationResult__Output } from '../protocol/messages.ts';
import { OBJECT_RESULTS, type AgentReport, type ObjectOutcomeRecord, type ObjectResult } from './model.ts';
import type { ObjectRefJson, OperationRequest } from './request.ts';

function ref(r: ObjectRefJson): ObjectRef {
  return { apiVersion: r.apiVersion, kind: r.kind, namespace: r.namespace ?? '', name: r.name };
}

export function operationMessage(id: string, account: string, attempt: number, timeoutMs: number, request: OperationRequest): Operation {
  const base = { operationId: id, account, attempt, timeoutMs };
  switch (request.action) {
    case 'deploy':
      return {
        ...base,
        deploy: { manifests: request.manifests.map((m) => JSON.stringify(m)), namespace: request.namespace ?? '', forceConflicts: request.forceConflicts },
      };
    case 'delete':
      return { ...base, delete: { targets: request.targets.map(ref), propagationPolicy: request.propagationPolicy ?? '' } };
    case 'scale':
      return { ...base, scale: { targets: request.targets.map(ref), replicas: request.replicas } };
    case 'patch':
      return { ...base, patch: { target: ref(request.target), patchType: request.patchType, patch: JSON.stringify(request.patch) } };
    case 'rolloutRestart':
      return { ...base, rolloutRestart: { targets: request.targets.map(ref) } };
    case 'rolloutUndo':
      return { ...base, rolloutUndo: { target: ref(request.target), toRevision: request.toRevision } };
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

export function reportOf(agentId: string, result: OperationResult__Output): AgentReport {
  return { agentId, attempt: result.attempt, startedAt: result.startedAtMs, finishedAt: result.finishedAtMs, budgetWaitMs: result.budgetWaitMs };
}

/** Results that leave the object as asked. */
export const SUCCESS_RESULTS: ReadonlySet<ObjectResult> = new Set(['created', 'configured', 'deleted', 'absent', 'scaled', 'patched', 'restarted', 'rolledBack', 'unchanged']);
