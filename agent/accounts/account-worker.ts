/**
 * What runs for each account the agent holds. The account holder (this folder) keeps one entry per
 * held account (assigned by the driver, or static from vendor-agent.yml), connects its cluster, and
 * gives every registered worker factory a chance to attach work to it: the resource cache, pod
 * metrics, deployment operations. Workers never talk to the connection or to each other directly.
 */
import type { Logger } from '../../shared/log.ts';
import type { AccountSettings__Output, AgentBody } from '../../shared/protocol/messages.ts';
import type { ClusterClient } from '../clusters/index.ts';
import type { AgentContext } from '../component.ts';
import type { DriverWork } from '../connection/driver-stream.ts';
import type { ScopeState } from '../resources/reflector.ts';

/** One scope a cache worker runs, as the agent's `/cache` shows it. */
export interface CachedScope {
  /** `Kind.group`, or `Kind.group/namespace` for a scope of one namespace (`scopeId`). */
  scope: string;
  resourceVersion: string | undefined;
  state: Readonly<ScopeState>;
}

/** An account as workers see it. A new object is passed on every change; never mutate it. */
export interface HeldAccountView {
  readonly name: string;
  /** The control plane's generation of the account (0 for a static account not yet assigned). */
  readonly generation: number;
  /**
   * The per-account settings (docs/agent-config.md#per-account-kubernetesaccounts; from the assignment, or from the agent's own file for a
   * static account). `maxResumableResourceAgeMs` 0 means the default, 300000.
   */
  readonly settings: AccountSettings__Output;
  /** Whether this agent is the one caching the account (exactly one agent per account is). */
  readonly caching: boolean;
  /** Raised by the driver on every caching takeover; cache data sent to the driver carries it. */
  readonly cachingEpoch: number;
  /** A connected client for the account's cluster. */
  readonly cluster: ClusterClient;
  /** Carries `account`. */
  readonly logger: Logger;
}

/** How a worker talks to the driver. */
export interface WorkerHost {
  /** A reliable message (resource events, operation results): resolves once the driver acknowledged it. */
  respond(body: AgentBody): Promise<void>;
  /** A message that may be lost (a resume query, pod metrics): false when there is no stream right now. */
  notify(body: AgentBody): boolean;
  /** Whether a stream to the driver is open. */
  connected(): boolean;
}

export interface AccountWorker {
  /** The account changed: settings, generation, caching role or epoch. */
  update(account: HeldAccountView): void | Promise<void>;
  /**
   * Driver messages addressed to this account that are not assignments (an operation, resume info).
   * A reliable one is acknowledged once this returns, so return when it is safely taken.
   */
  handle?(work: DriverWork): void | Promise<void>;
  /** A new stream to the driver is open (after a reconnect the driver may be another replica). */
  connected?(): void;
  /** The scopes this worker caches now (the resource cache's worker only), for the agent's `/cache`. */
  cacheScopes?(): CachedScope[];
  /** The account is removed, the agent stops or the connection to the driver is lost: end all work, flush what must reach the driver. */
  stop(): Promise<void>;
}

/** Builds a worker for a newly held account, or undefined when this kind of work never applies to it. */
export type AccountWorkerFactory = (account: HeldAccountView, host: WorkerHost, ctx: AgentContext) => AccountWorker | undefined;
