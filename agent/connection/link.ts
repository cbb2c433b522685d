/**
 * What the driver connection and the account holder share within one running agent: the
 * connection carries the holder's work and answers, and asks it what to announce in hello. Each is
 * its own component; this joins them per agent context.
 */
import type { HeldAccount } from '../../shared/protocol/messages.ts';
import type { AgentContext } from '../component.ts';
import type { DriverConnection } from './connection.ts';
import type { DriverWork } from './driver-stream.ts';

export interface WorkHandler {
  handle(work: DriverWork): Promise<void>;
  /** What the agent holds, for Hello. */
  held(): HeldAccount[];
  /** A new stream was welcomed, with its lease. */
  connected(welcome: { leaseMs: number }): void;
  /** The stream ended, or a dial failed. */
  disconnected?(): void;
}

export interface DriverLink {
  readonly connection: DriverConnection;
  handler?: WorkHandler;
}

const links = new WeakMap<AgentContext, DriverLink>();

export function setDriverLink(ctx: AgentContext, link: DriverLink): void {
  links.set(ctx, link);
}

export function driverLink(ctx: AgentContext): DriverLink | undefined {
  return links.get(ctx);
}
