/**
 * Runs one operation on an account's cluster and says what came of it, object by object, in the
 * words of the API server. Every request goes through the account's `ClusterClient`, so
 * `kubernetes.retries.*` apply to each. Kinds left out of caching by `kinds`/`omitKinds` are
 * operated on like any other: discovery, not the cache, says what the cluster serves.
 */
import type { ObjectOutcomeRecord } from '../../shared/operations/model.ts';
import { SUCCESS_RESULTS } from '../../shared/operations/message.ts';
import type { Operation__Output } from '../../shared/protocol/messages.ts';
import { deploy } from './deploy.ts';
import { patchAction, restartAction, undoAction } from './guarded.ts';
import { failedOutcome, type ExecContext } from './kube.ts';
import { deleteAction, forEachTarget, idOfRef, scaleAction } from './targets.ts';

export interface Execution {
  ok: boolean;
  message: string;
  outcomes: ObjectOutcomeRecord[];
}

async function outcomesOf(ctx: ExecContext, op: Operation__Output): Promise<ObjectOutcomeRecord[]> {
  switch (op.action) {
    case 'deploy':
      return deploy(ctx, op.deploy ?? { manifests: [], namespace: '', forceConflicts: false });
    case 'delete':
      return forEachTarget(ctx, op.delete?.targets ?? [], deleteAction(ctx, op.delete?.propagationPolicy ?? ''));
    case 'scale':
      return forEachTarget(ctx, op.scale?.targets ?? [], scaleAction(ctx, op.scale?.replicas ?? 0));
    case 'patch': {
      const p = op.patch;
      let action;
      try {
        action = patchAction(ctx, p?.patchType ?? '', p?.patch ?? '');
      } catch {
        return [failedOutcome(0, idOfRef(p?.target), 'the patch is not valid JSON')];
      }
      return forEachTarget(ctx, [p?.target], action);
    }
    case 'rolloutRestart':
      return forEachTarget(ctx, op.rolloutRestart?.targets ?? [], restartAction(ctx));
    case 'rolloutUndo':
      return forEachTarget(ctx, [op.rolloutUndo?.target], undoAction(ctx, op.rolloutUndo?.toRevision ?? 0));
    default:
      return [];
  }
}

/**
 * The first failure's own words (or the first skip's, when nothing failed), so the operation says why
 * without a look at its objects. Outcome messages are the API server's or the connection's, clipped,
 * and never carry credentials.
 */
function firstCause(failed: readonly ObjectOutcomeRecord[]): string {
  const first = failed.find((o) => o.result === 'failed') ?? failed[0];
  return first?.message ?? 'no reason given';
}

/** Runs `op`; never throws: whatever goes wrong is in the outcomes and the message. */
export async function executeOperation(ctx: ExecContext, op: Operation__Output): Promise<Execution> {
  if (op.action === undefined) return { ok: false, message: 'the operation names no action this agent knows; it may be newer than this agent', outcomes: [] };
  const outcomes = await outcomesOf(ctx, op);
  const failed = outcomes.filter((o) => !SUCCESS_RESULTS.has(o.result));
  const total = outcomes.length;
  const message =
    failed.length === 0
      ? `${total} ${total === 1 ? 'object' : 'objects'} done`
      : `${failed.filter((o) => o.result === 'failed').length} of ${total} failed, ${failed.filter((o) => o.result === 'skipped').length} skipped: ${firstCause(failed)}`;
  return { ok: failed.length === 0 && total > 0, message, outcomes };
}
