import type { AccountState } from './schema.ts';
import type { AccountSettings } from './settings.ts';

/**
 * Where an account definition comes from. Config file, config server and plugins are the driver
 * service's own sources (served as `source: driver`); agents announce their static accounts.
 */
export const SOURCE_KINDS = ['driver-config', 'config-server', 'plugin', 'static-agent-config'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export const DRIVER_SOURCE_KINDS: readonly SourceKind[] = ['driver-config', 'config-server', 'plugin'];

/** The agent's precedence against plugin sources (docs/api.md#precedence): lower values win. */
export const AGENT_PRECEDENCE = 1000;

/**
 * The most static accounts one agent defines (docs/agent-config.md#per-account-kubernetesaccounts):
 * their names are kept together in the agent's session item, which holds 400 KB (1,000 names of 253
 * characters take about 256 KB), ten times the hundred accounts an agent is sized for.
 */
export const MAX_STATIC_ACCOUNTS = 1000;

/** The settings a source gives for one account; the name is the item's key. */
export type DefinitionSettings = Omit<AccountSettings, 'name'>;

/** One source's definition of an account, kept in the account item under the source's id. */
export interface Definition {
  kind: SourceKind;
  /** Plugins only: their `CredentialsDefinitionSource` precedence; absent means none defined. */
  precedence?: number;
  /** Static agent accounts: the announcing agent and its zone. */
  agentId?: string;
  zoneId?: string;
  settings: DefinitionSettings;
  /** ms since epoch when this source last changed the definition. */
  at: number;
}

/** What POST stored: the account is registered for migration to agents. */
export interface Registration {
  zoneId?: string;
  kubeconfigFile?: string;
  at: number;
}

/** One agent's answer to an assignment, written by the driver. */
export interface AgentResult {
  agentId: string;
  caching: boolean;
  /** false when the agent could not use the account; such agents are not served in `agents[]`. */
  ok: boolean;
  message?: string;
  /** The account generation the agent was answering for. */
  generation?: number;
  /** The latest generation the driver handed to this agent (an assignment, or with `removing` a removal). */
  assigned?: number;
  /** The driver is taking the account off this agent; the entry goes once the agent confirms. */
  removing?: boolean;
  at: number;
}

/** Whether the account's cluster answers its caching agent, as that agent last reported (times on the driver's clock, ms). */
export interface ClusterStatusRecord {
  reachable: boolean;
  /** When the present state began. */
  since: number;
  /** While not reachable. */
  reason?: string;
  error?: string;
  /** The last outage that ended. */
  lastOutage?: { reason: string; from: number; until: number };
  /** The reporting agent and when the driver took the report. */
  agentId: string;
  at: number;
}

/** The stored account: every source's definition, migration state and assignment results, in one item. */
export interface AccountRecord {
  name: string;
  /** Raised by every write; writers condition on it (optimistic lock). */
  version: number;
  /** Raised by every change the driver must act on (registration, activation, removal, definition change). */
  generation: number;
  defs: Record<string, Definition>;
  registration?: Registration;
  state?: AccountState;
  agents: Record<string, AgentResult>;
  lastAssignmentMsg?: string;
  cachingAgentId?: string;
  /** Raised on each caching takeover; the driver refuses events with an older epoch. */
  cachingEpoch?: number;
  updatedAt: number;
  /** Written by the driver from the caching agent's reports (shared/table/accounts/cluster-status.ts). */
  cluster?: ClusterStatusRecord;
  /** Id of the last write by `mutateAccount`: tells a writer whose answer was lost that its write landed. */
  lastWriteId?: string;
}
