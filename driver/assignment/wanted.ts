/**
 * Which agents should hold an account, and with what, decided from the account item alone so that
 * every replica decides the same:
 *
 * - a **static** account (the agent's own definition wins by SPEC 2.4) is held by each agent that
 *   announced it, with that agent's own vendor-agent.yml entry (`static_account`, no kubeconfig
 *   reference);
 * - a **migrated** account (registered by POST and activated by PATCH: state `ACTIVE` or `FAILED`)
 *   whose served definition is the driver's goes to every agent of its zone, or to every agent when
 *   it has no zone, with the registration's kubeconfig reference, else the definition's own.
 */
import { agentSourceId } from '../../shared/table/sources.ts';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { winningDefinition } from '../../shared/accounts/precedence.ts';
import type { AssignAccount } from '../../shared/protocol/messages.ts';
import { accountSettingsMessage } from '../../shared/protocol/settings.ts';

/** The generation assignments carry: the account's, and at least 1 (a static account may never have been raised). */
export function assignmentGeneration(record: AccountRecord): number {
  return Math.max(1, record.generation);
}

/** Registered and activated by PATCH; `FAILED` is still wanted, so an agent joining later tries again. */
export function isActivated(record: AccountRecord): boolean {
  return record.registration !== undefined && (record.state === 'ACTIVE' || record.state === 'FAILED');
}

export function servedFromAgent(record: AccountRecord): boolean {
  return winningDefinition(record.defs)?.[1].kind === 'static-agent-config';
}

/** Migrated and served from the driver's definition: the accounts whose `state` the driver keeps. */
export function isMigrated(record: AccountRecord): boolean {
  return isActivated(record) && winningDefinition(record.defs) !== undefined && !servedFromAgent(record);
}

/** The assignment `agentId` (in `zone`) should hold, without the caching role; undefined when it should hold nothing. */
export function wantedFor(record: AccountRecord, agentId: string, zone: string): Omit<AssignAccount, 'caching' | 'cachingEpoch'> | undefined {
  const winner = winningDefinition(record.defs);
  if (winner === undefined) return undefined;
  const generation = assignmentGeneration(record);
  if (winner[1].kind === 'static-agent-config') {
    const own = record.defs[agentSourceId(agentId)];
    if (own === undefined) return undefined;
    return { account: record.name, generation, kubeconfigRef: '', settings: accountSettingsMessage(own.settings), zoneId: zone, staticAccount: true };
  }
  if (!isActivated(record)) return undefined;
  const zoneId = record.registration?.zoneId;
  if (zoneId !== undefined && zoneId !== zone) return undefined;
  const { kubeconfigFile, ...settings } = winner[1].settings;
  return {
    account: record.name,
    generation,
    kubeconfigRef: record.registration?.kubeconfigFile ?? kubeconfigFile ?? '',
    settings: accountSettingsMessage(settings),
    zoneId: zoneId ?? '',
    staticAccount: false,
  };
}

/** Whether any agent at all should hold the account. */
export function wantedAnywhere(record: AccountRecord): boolean {
  return servedFromAgent(record) || isMigrated(record);
}
