/**
 * Which agents should hold an account, and with what, decided from the account item alone so that
 * every replica decides the same:
 *
 * - a **static** account (the agent's own definition wins by docs/api.md#precedence) is held by each agent that
 *   announced it, with that agent's own vendor-agent.yml entry (`static_account`, no kubeconfig
 *   reference);
 * - a **migrated** account (registered by POST and activated by PATCH: state `ACTIVE` or `FAILED`)
 *   whose served definition is the driver's goes to every agent of its zone, or, when it has no
 *   zone, to every agent whose identity allows accounts pinned to no zone (`unzoned`), with the
 *   registration's kubeconfig reference, else the definition's own. An agent's zone is one its
 *   identity allows (checked at hello, driver/hello-policy.ts), so a zone's accounts go only to
 *   agents whose identity allows that zone.
 */
import { agentSourceId } from '../../shared/table/sources/agent-static.ts';
import type { AccountRecord, Definition } from '../../shared/accounts/model.ts';
import { winningDefinition } from '../../shared/accounts/precedence.ts';
import type { AssignAccount } from '../../shared/protocol/messages.ts';
import { accountSettingsMessage } from '../../shared/accounts/settings-message.ts';

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

/**
 * Where an agent is, as far as assignment is concerned: its session's zone, and whether its
 * identity may be sent accounts pinned to no zone. Session items carry both, so every replica
 * decides alike for agents of other replicas too.
 */
export interface AgentPlace {
  readonly zone: string;
  readonly unzoned: boolean;
}

/** Whether an agent should hold an account: `wantedFor`'s decision without the message it builds. */
export type WantedBy = (agentId: string, place: AgentPlace) => boolean;

const NOBODY: WantedBy = () => false;

/**
 * Which agents should hold the account, decided from the item once: settling one account asks it of
 * every live agent, and building each one's assignment (its settings message) only to ask would cost
 * a message per live agent per settle.
 */
export function wantedBy(record: AccountRecord): WantedBy {
  const winner = winningDefinition(record.defs);
  if (winner === undefined) return NOBODY;
  if (winner[1].kind === 'static-agent-config') return (agentId) => record.defs[agentSourceId(agentId)] !== undefined;
  if (!isActivated(record)) return NOBODY;
  const zoneId = record.registration?.zoneId;
  return zoneId !== undefined ? (_agentId, place) => place.zone === zoneId : (_agentId, place) => place.unzoned;
}

/** The assignment `agentId` (at `place`) should hold, without the caching role; undefined when it should hold nothing. */
export function wantedFor(record: AccountRecord, agentId: string, place: AgentPlace): Omit<AssignAccount, 'caching' | 'cachingEpoch'> | undefined {
  if (!wantedBy(record)(agentId, place)) return undefined;
  const { zone } = place;
  const winner = winningDefinition(record.defs) as [string, Definition];
  const generation = assignmentGeneration(record);
  if (winner[1].kind === 'static-agent-config') {
    const own = record.defs[agentSourceId(agentId)] as Definition;
    return { account: record.name, generation, kubeconfigRef: '', settings: accountSettingsMessage(own.settings), zoneId: zone, staticAccount: true };
  }
  const zoneId = record.registration?.zoneId;
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

/**
 * Whether what the account item says of its place lets an agent at `place` hold it at all: a static
 * account only by an agent that defines it, a registered one only in its zone, or, with no zone, only
 * by agents whose identity allows that. Looser than `wantedFor` (an account not activated yet, or
 * with no definition, passes): it is what cache data is checked against besides the caching role, so
 * an agent id that some identity took over after the grace still cannot feed another zone's cache.
 */
export function placeAllows(record: AccountRecord, agentId: string, place: AgentPlace): boolean {
  if (servedFromAgent(record)) return record.defs[agentSourceId(agentId)] !== undefined;
  if (record.registration === undefined) return true;
  const zoneId = record.registration.zoneId;
  return zoneId !== undefined ? zoneId === place.zone : place.unzoned;
}

/** Whether any agent at all should hold the account. */
export function wantedAnywhere(record: AccountRecord): boolean {
  return servedFromAgent(record) || isMigrated(record);
}
