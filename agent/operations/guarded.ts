/**
 * Changes that would not be harmless twice (a JSON patch that appends, a restart, an undo), made at
 * most once per operation id even when the operation is handed out again to another agent. Each
 * change also writes the operation id into the object's `vendor-agent.io/operations` annotation (the
 * last 10 ids), in the same request and under the resourceVersion just read: the object either still
 * is as read and gets both, or the request is refused with a conflict and the object is read again.
 * An object already carrying the id was changed by an earlier attempt, and is left alone.
 */
import type { ObjectOutcomeRecord } from '../../shared/operations/model.ts';
import type { KubeResponse } from '../clusters/index.ts';
import { call, failureOf, objectVersion, type ExecContext } from './kube.ts';
import type { TargetAction } from './targets.ts';

export const GUARD_ANNOTATION = 'vendor-agent.io/operations';
const GUARD_KEEP = 10;
/** Reads and tries again after this many conflicts at most. */
const MAX_CONFLICTS = 5;
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
const REVISION = 'deployment.kubernetes.io/revision';

export interface LiveObject {
  metadata: { resourceVersion?: string; uid?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What to send for a change of `current`, or the outcome without a change. */
export type GuardedChange =
  | { contentType: string; body: unknown; result: ObjectOutcomeRecord['result']; message?: string }
  | { outcome: Omit<ObjectOutcomeRecord, 'index' | 'apiVersion' | 'kind' | 'namespace' | 'name'> };

/** The guard's ids after this operation. */
function guardIds(current: LiveObject, operationId: string): string {
  const ids = (current.metadata.annotations?.[GUARD_ANNOTATION] ?? '').split(',').filter((s) => s !== '');
  return [...ids, operationId].slice(-GUARD_KEEP).join(',');
}

function alreadyApplied(current: LiveObject, operationId: string): boolean {
  return (current.metadata.annotations?.[GUARD_ANNOTATION] ?? '').split(',').includes(operationId);
}

/** Metadata that makes a strategic or merge patch conditional on `current` and records the guard. */
function guardMetadata(current: LiveObject, operationId: string): { resourceVersion: string; annotations: Record<string, string> } {
  return { resourceVersion: current.metadata.resourceVersion ?? '', annotations: { [GUARD_ANNOTATION]: guardIds(current, operationId) } };
}

/** JSON Patch operations that do the same: replacing the resourceVersion makes the update conditional. */
function guardOperations(current: LiveObject, operationId: string): Record<string, unknown>[] {
  const ids = guardIds(current, operationId);
  return [
    { op: 'replace', path: '/metadata/resourceVersion', value: current.metadata.resourceVersion ?? '' },
    current.metadata.annotations === undefined
      ? { op: 'add', path: '/metadata/annotations', value: { [GUARD_ANNOTATION]: ids } }
      : { op: 'add', path: `/metadata/annotations/${GUARD_ANNOTATION.replace('~', '~0').replace('/', '~1')}`, value: ids },
  ];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds the guard to a strategic or merge patch, keeping any metadata and annotations it sets. */
function withGuard(patch: Record<string, unknown>, current: LiveObject, operationId: string): Record<string, unknown> {
  const guard = guardMetadata(current, operationId);
  const meta = isPlainObject(patch.metadata) ? patch.metadata : {};
  const annotations = isPlainObject(meta.annotations) ? meta.annotations : {};
  return { ...patch, metadata: { ...meta, resourceVersion: guard.resourceVersion, annotations: { ...annotations, ...guard.annotations } } };
}

function isModifiedConflict(error: unknown): boolean {
  const f = failureOf(error);
  return f.code === 409 && /has been modified|resourceVersion/i.test(f.message);
}

/** Reads, decides, sends; again after a conflict. */
export function guarded(ctx: ExecContext, decide: (current: LiveObject, path: string) => Promise<GuardedChange> | GuardedChange): TargetAction {
  return async (_obj, _r, path) => {
    for (let conflicts = 0; ; conflicts++) {
      const current = (await call(ctx, { path })).json<LiveObject>();
      if (alreadyApplied(current, ctx.operationId)) {
        return { result: 'unchanged', message: 'already changed by an earlier attempt of this operation', ...(current.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}) };
      }
      const change = await decide(current, path);
      if ('outcome' in change) return change.outcome;
      let res: KubeResponse;
      try {
        res = await call(ctx, { method: 'PATCH', path, headers: { 'content-type': change.contentType }, body: JSON.stringify(change.body) });
      } catch (error) {
        if (isModifiedConflict(error) && conflicts + 1 < MAX_CONFLICTS) continue;
        throw error;
      }
      return { result: change.result, ...objectVersion(res), ...(change.message === undefined ? {} : { message: change.message }) };
    }
  };
}

const CONTENT_TYPES: Record<string, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

export function patchAction(ctx: ExecContext, patchType: string, patchText: string): TargetAction {
  const patch: unknown = JSON.parse(patchText);
  return guarded(ctx, (current) => ({
    contentType: CONTENT_TYPES[patchType] ?? CONTENT_TYPES.merge as string,
    body: Array.isArray(patch) ? [...guardOperations(current, ctx.operationId), ...patch] : withGuard(patch as Record<string, unknown>, current, ctx.operationId),
    result: 'patched',
  }));
}

export function restartAction(ctx: ExecContext): TargetAction {
  return guarded(ctx, (current) => {
    const at = new Date(ctx.clock.now()).toISOString();
    return {
      contentType: CONTENT_TYPES.strategic as string,
      body: { metadata: guardMetadata(current, ctx.operationId), spec: { template: { metadata: { annotations: { [RESTARTED_AT]: at } } } } },
      result: 'restarted',
      message: `restartedAt ${at}`,
    };
  });
}

interface ReplicaSet {
  metadata: { name?: string; annotations?: Record<string, string>; ownerReferences?: { uid?: string; controller?: boolean }[] };
  spec?: { template?: { metadata?: { labels?: Record<string, string> } } & Record<string, unknown> };
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** What `kubectl rollout undo` does: the Deployment's pod template becomes that of a ReplicaSet of an earlier revision. */
export function undoAction(ctx: ExecContext, toRevision: number): TargetAction {
  return guarded(ctx, async (current, path) => {
    const collection = path.slice(0, path.lastIndexOf('/deployments/'));
    const matchLabels = (current.spec?.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels ?? {};
    const labelSelector = Object.entries(matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
    const list = (await call(ctx, { path: `${collection}/replicasets`, query: { labelSelector: labelSelector || undefined } })).json<{ items?: ReplicaSet[] }>().items ?? [];
    const owned = list.filter((rs) => (rs.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === current.metadata.uid));
    const revisions = new Map<number, ReplicaSet>();
    for (const rs of owned) {
      const revision = Number(rs.metadata.annotations?.[REVISION] ?? 0);
      if (revision > 0) revisions.set(revision, rs);
    }
    const currentRevision = Number(current.metadata.annotations?.[REVISION] ?? Math.max(0, ...revisions.keys()));
    const target = toRevision > 0 ? toRevision : Math.max(0, ...[...revisions.keys()].filter((r) => r < currentRevision));
    const rs = revisions.get(target);
    if (rs === undefined || rs.spec?.template === undefined) {
      const known = [...revisions.keys()].sort((a, b) => a - b).join(', ') || 'none';
      return { outcome: { result: 'failed', message: toRevision > 0 ? `unable to find specified revision ${toRevision} in history (revisions: ${known})` : `no rollout history to go back to (revisions: ${known})` } };
    }
    const template = structuredClone(rs.spec.template);
    if (template.metadata?.labels !== undefined) delete template.metadata.labels['pod-template-hash'];
    if (sameJson(template, current.spec?.template)) {
      return { outcome: { result: 'unchanged', message: `skipped rollback (current template already matches revision ${target})` } };
    }
    return {
      contentType: CONTENT_TYPES.json as string,
      body: [...guardOperations(current, ctx.operationId), { op: 'replace', path: '/spec/template', value: template }],
      result: 'rolledBack',
      message: `rolled back to revision ${target}`,
    };
  });
}
