import type { AccountRecord } from './model.ts';
import { servedClusterStatus } from './cluster-status-view.ts';
import { KUBECONFIG_CONTENTS_PROBLEM, MAX_KUBECONFIG_REFERENCE, kubeconfigReferenceProblem } from './kubeconfig-reference.ts';
import { accessOfSettings } from './permissions.ts';
import { winningDefinition } from './precedence.ts';
import type { Account } from './schema.ts';

/**
 * The account as served (docs/api.md#the-account-served), resolved from its stored record. `config` holds the
 * winning definition's settings, with the migration's kubeconfig reference in place when one was
 * registered; it carries references only, never kubeconfig contents or secret values. An account whose
 * role names contain whitespace is flagged, since its permissions are not applied (docs/agent-config.md#permissions).
 */
/** What is served in place of kubeconfig contents found where a reference belongs. */
export const KUBECONFIG_CONTENTS_SHOWN = '(kubeconfig contents, not shown)';

function looksLikeContents(value: string): boolean {
  return value.length > MAX_KUBECONFIG_REFERENCE || kubeconfigReferenceProblem(value) === KUBECONFIG_CONTENTS_PROBLEM;
}

export function toAccount(record: AccountRecord): Account {
  const winner = winningDefinition(record.defs);
  const def = winner?.[1];
  const fromAgent = def?.kind === 'static-agent-config';
  const config: Record<string, unknown> = { ...(def?.settings ?? {}) };
  const reg = record.registration;
  if (!fromAgent && reg?.kubeconfigFile !== undefined) config.kubeconfigFile = reg.kubeconfigFile;
  // Stored before references were checked, contents may sit where a reference belongs: never serve them.
  if (typeof config.kubeconfigFile === 'string' && looksLikeContents(config.kubeconfigFile)) {
    config.kubeconfigFile = KUBECONFIG_CONTENTS_SHOWN;
  }
  const zoneId = fromAgent ? def?.zoneId : reg?.zoneId;
  const access = accessOfSettings(def?.settings);
  const agents = Object.values(record.agents)
    .filter((a) => a.ok)
    .sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0))
    .map((a) => ({ agentId: a.agentId, caching: a.caching }));
  return {
    name: record.name,
    type: 'kubernetes',
    source: fromAgent ? 'static-agent-config' : 'driver',
    config,
    ...(zoneId === undefined ? {} : { zoneId }),
    agents,
    lastAssignmentMsg: record.lastAssignmentMsg ?? '',
    ...(record.state === undefined ? {} : { state: record.state }),
    ...(record.cluster === undefined ? {} : { cluster: servedClusterStatus(record.cluster) }),
    ...(access.kind === 'ignored' ? { permissionsIgnored: true as const, permissionsIgnoredReason: access.reason } : {}),
  };
}
