/**
 * Actions on named objects (delete, scale, and the guarded ones): every target is resolved first, and
 * when one cannot be acted on, none is. Delete and scale are idempotent by nature: deleting an object
 * that is gone leaves it gone (`absent`), and scaling to a count twice is scaling to it once.
 */
import type { ObjectOutcomeRecord } from '../../shared/operations/model.ts';
import type { ObjectRef__Output } from '../../shared/protocol/messages.ts';
import { runBounded } from '../../shared/table/core/bounded.ts';
import { objectPath } from './resource-discovery.ts';
import { call, failedOutcome, failureOf, objectVersion, outcome, OutOfTime, resolveObject, type ExecContext, type ObjectId, type Resolved } from './kube.ts';

/** Targets acted on at once. */
const TARGET_CONCURRENCY = 8;

export function idOfRef(ref: ObjectRef__Output | null | undefined): ObjectId {
  return { apiVersion: ref?.apiVersion ?? '', kind: ref?.kind ?? '', namespace: ref?.namespace ?? '', name: ref?.name ?? '' };
}

export type TargetAction = (obj: ObjectId, r: Resolved, path: string) => Promise<Omit<ObjectOutcomeRecord, 'index' | 'apiVersion' | 'kind' | 'namespace' | 'name'>>;

/** Resolves every target, then runs `act` on each; a failing step becomes that target's outcome. */
export async function forEachTarget(ctx: ExecContext, refs: readonly (ObjectRef__Output | null | undefined)[], act: TargetAction): Promise<ObjectOutcomeRecord[]> {
  const targets = refs.map(idOfRef);
  const resolved = await Promise.all(targets.map((t) => resolveObject(ctx, t)));
  const refusedAt = resolved.findIndex((r) => typeof r === 'string');
  if (refusedAt >= 0) {
    return resolved.map((r, i) =>
      typeof r === 'string'
        ? failedOutcome(i, targets[i] as ObjectId, r)
        : outcome(i, targets[i] as ObjectId, 'skipped', { message: `not acted on: target ${refusedAt} of the operation cannot be` }),
    );
  }
  const outcomes: ObjectOutcomeRecord[] = new Array(targets.length);
  await runBounded(
    (resolved as Resolved[]).map((r, i) => async () => {
      const obj = { ...(targets[i] as ObjectId), namespace: r.namespace };
      try {
        outcomes[i] = { ...outcome(i, obj, 'failed'), ...(await act(obj, r, objectPath(r.info, r.namespace, obj.name))) };
      } catch (error) {
        outcomes[i] = error instanceof OutOfTime || ctx.signal.aborted ? outcome(i, obj, 'skipped', { message: failureOf(error).message }) : failedOutcome(i, obj, failureOf(error));
      }
    }),
    TARGET_CONCURRENCY,
  );
  return outcomes;
}

export function deleteAction(ctx: ExecContext, propagationPolicy: string): TargetAction {
  return async (_obj, _r, path) => {
    try {
      const res = await call(ctx, {
        method: 'DELETE',
        path,
        body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(propagationPolicy === '' ? {} : { propagationPolicy }) },
      });
      return { result: 'deleted', code: res.status };
    } catch (error) {
      const f = failureOf(error);
      // Gone already, by an earlier attempt of this operation or by someone else: the end state holds.
      if (f.code === 404) return { result: 'absent', code: 404, reason: f.reason, message: f.message };
      throw error;
    }
  };
}

export function scaleAction(ctx: ExecContext, replicas: number): TargetAction {
  return async (obj, r, path) => {
    if (!r.info.subresources.has('scale')) {
      return { result: 'failed', message: `${r.info.resource} (${obj.kind}) has no scale subresource on this cluster` };
    }
    const res = await call(ctx, {
      method: 'PATCH',
      path: `${path}/scale`,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { replicas } }),
    });
    return { result: 'scaled', ...objectVersion(res), message: `replicas ${replicas}` };
  };
}
