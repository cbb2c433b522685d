/**
 * How the driver handles agent messages beyond the session's own (hello, heartbeat, ack, assignment
 * results): a map from body kind to a handler, given to `startDriver()`. Each concern (the resource
 * cache, operations) builds its handlers from its own dependencies and the maps are merged.
 *
 * A handler runs in the session's serial queue, so messages of one stream are handled one at a time
 * in arrival order. A reliable message is acknowledged once its handler resolves; a handler that
 * throws ends the stream with that error (a `protocol_error` carrying `details.seq` is refused by name,
 * so the agent drops that message instead of sending it forever).
 */
import type { AgentBodyKind, AgentEnvelope, DriverBody } from '../shared/protocol/messages.ts';

/** What a handler may use of the session that received the message. */
export interface SessionPort {
  readonly id: string;
  readonly agentId: string;
  readonly zone: string;
  /** Sends a message on this stream; a reliable one resolves when the agent acknowledges it. */
  send(out: DriverBody): Promise<void>;
}

export type MessageOf<K extends AgentBodyKind> = Extract<AgentEnvelope, { kind: K }>;

export type MessageHandler<K extends AgentBodyKind> = (message: MessageOf<K>, session: SessionPort) => Promise<void> | void;

export type MessageHandlers = { readonly [K in AgentBodyKind]?: MessageHandler<K> };

/** Bodies the session handles itself; a handler for them is refused. */
const SESSION_BODIES: ReadonlySet<AgentBodyKind> = new Set<AgentBodyKind>(['hello', 'heartbeat', 'ack', 'assignmentResult']);

/** One map from several; a body kind handled twice, or one the session handles itself, is a programming error. */
export function mergeHandlers(...sets: MessageHandlers[]): MessageHandlers {
  const out: Record<string, unknown> = {};
  for (const set of sets) {
    for (const [kind, handler] of Object.entries(set)) {
      if (handler === undefined) continue;
      if (SESSION_BODIES.has(kind as AgentBodyKind)) throw new Error(`${kind} is handled by the session itself`);
      if (kind in out) throw new Error(`two handlers for ${kind}`);
      out[kind] = handler;
    }
  }
  return out as MessageHandlers;
}

/** The handler for `message`, called with it, or false when there is none. */
export async function dispatch(handlers: MessageHandlers | undefined, message: AgentEnvelope, session: SessionPort): Promise<boolean> {
  const handler = handlers?.[message.kind] as MessageHandler<typeof message.kind> | undefined;
  if (handler === undefined || SESSION_BODIES.has(message.kind)) return false;
  await (handler as (m: AgentEnvelope, s: SessionPort) => Promise<void> | void)(message, session);
  return true;
}
