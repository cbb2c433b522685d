/**
 * The checks of a parsed request against the account it is for, made before anything is stored:
 * the account's restrictions (namespaces, onlyNamespacedResources with its listed CRDs) on every
 * object whose scope is known without the cluster, and the kinds rollouts apply to.
 */
import type { Issue } from '../errors.ts';
import { RESTARTABLE_KINDS, UNDOABLE_KINDS, groupKind, knownScope } from './kinds.ts';
import { requestObjects, type OperationRequest } from './request.ts';
import { restrictionProblem, type AccountRestrictions } from './rules.ts';

export function requestIssues(request: OperationRequest, paths: readonly string[], account: AccountRestrictions): Issue[] {
  const issues: Issue[] = [];
  requestObjects(request).forEach((obj, i) => {
    const path = paths[i] ?? '';
    const problem = restrictionProblem(account, obj, knownScope(obj.apiVersion, obj.kind, account.customResourceDefinitions));
    if (problem !== undefined) issues.push({ path, message: problem });
    const key = groupKind(obj.apiVersion, obj.kind);
    if (request.action === 'rolloutRestart' && !RESTARTABLE_KINDS.has(key)) {
      issues.push({ path: `${path}.kind`, message: `rollout restart applies to apps/v1 Deployment, StatefulSet and DaemonSet, not ${obj.kind}` });
    }
    if (request.action === 'rolloutUndo' && !UNDOABLE_KINDS.has(key)) {
      issues.push({ path: `${path}.kind`, message: `rollout undo applies to apps/v1 Deployment, not ${obj.kind}` });
    }
  });
  return issues;
}
