/**
 * How the driver's work plugs into its endpoint. The endpoint (server.ts, agent-session.ts) carries
 * streams: authentication, hello and welcome, heartbeats, the lease, sequence numbers and acks.
 * Everything else is a module: it handles the agent message kinds it names and follows sessions as
 * they open and close. `DRIVER_MODULES` (driver/modules.ts) lists the modules a driver runs.
 *
 * A handler gets the message and the session it came on (`session.agentId`, `session.zone`,
 * `session.id`, `session.send()`); it reaches the table through the `DriverServices` its module was
 * built with. A reliable message is acknowledged once its handler resolves, or, when the handler
 * answers `HandledLater`, once its `done` resolves (ahead of earlier messages still running, if any:
 * docs/protocol.md section 3). A handler that throws
 * ends the stream: a `VendorError` with code `protocol_error` (see `protocolError()`) refuses the
 * message by name (the agent drops it); any other error makes the agent reconnect and send it again.
 */
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/log.ts';
import type { OperationEvents } from '../shared/operations/events.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import type { AgentMessageHandlers, AgentSession, Holding } from './agent-session.ts';
import type { DriverGrpcConfig } from './config.ts';
import type { DriverMetrics } from './metrics/metrics.ts';
import type { WakeName, WakeTopic } from '../shared/wake/message.ts';

// The handler types are the session's dispatch contract, so they live beside it (a module imports
// the session, never the other way round); modules take them from here.
export type { AgentMessageHandler, AgentMessageHandlers, HandledKind, HandledLater, IncomingMessage } from './agent-session.ts';

/** What every module is built with. */
export interface DriverServices {
  readonly table: TableRef;
  readonly clock: Clock;
  readonly log: Logger;
  /** Names this process in sessions and Welcome. */
  readonly replicaId: string;
  readonly config: DriverGrpcConfig;
  /** Operation news shared with the API when both run in this process (`npm start`). */
  readonly operationEvents?: OperationEvents | undefined;
  /** Where modules count what they do (docs/metrics.md). */
  readonly metrics?: DriverMetrics | undefined;
  /** Sessions of this replica that have been welcomed and not yet ended. */
  sessions(): readonly AgentSession[];
  /**
   * Tells every module that what `session`'s agent holds of `account` changed (`session.holdings`):
   * for example, confirmed (`state: 'held'`), so queued operations for it may go out.
   */
  holdingChanged(session: AgentSession, account: string, holding: Holding | undefined): void;
}

export interface DriverModule {
  readonly name: string;
  readonly handlers?: AgentMessageHandlers;
  /** Runs before the endpoint accepts agents; what it loads is ready for the first session. */
  start?(signal: AbortSignal): Promise<void>;
  onSessionOpen?(session: AgentSession): void;
  /** Called for sessions that were welcomed, once their stream ended. */
  onSessionClose?(session: AgentSession, reason: string): void;
  onHoldingChange?(session: AgentSession, account: string, holding: Holding | undefined): void;
  /**
   * The API wrote work for this topic (a verified wake, docs/protocol.md#6b-wakes): look at the table
   * now; an `operations` wake may name the operation to look at first, an `accounts` wake the account.
   */
  onWake?(topic: WakeTopic, named?: WakeName): void;
  /** Ends background work; the streams have ended already. */
  stop?(): Promise<void>;
}

export type DriverModuleFactory = (services: DriverServices) => DriverModule;
