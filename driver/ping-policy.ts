/**
 * Keepalive enforcement. grpc-js servers answer every HTTP/2 PING without limit and read neither
 * `grpc.keepalive_permit_without_calls` nor a minimum ping interval, so the driver applies gRPC's
 * policy itself: a ping sooner than `minPingIntervalMs` after the previous one, or on a connection
 * without open streams when that is not permitted, is a strike; past `maxPingStrikes` strikes the
 * connection gets GOAWAY ENHANCE_YOUR_CALM with debug data `too_many_pings` (which makes gRPC
 * clients double their keepalive interval) and is closed. A ping at a proper interval clears the
 * strikes.
 *
 * grpc-js keeps its HTTP/2 sessions to itself; Node's `http2.server.stream.created` diagnostics
 * channel hands out each new stream, and through it its session, without reaching into grpc-js.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { constants, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { Clock } from '../shared/clock.ts';

export interface PingPolicy {
  minPingIntervalMs: number;
  permitWithoutCalls: boolean;
  maxPingStrikes: number;
}

interface Tracked {
  openStreams: number;
  lastPingAt: number | undefined;
  strikes: number;
}

const CHANNEL = 'http2.server.stream.created';

/** Starts enforcing `policy` on the sessions `owns` picks out; returns the function that stops it. */
export function enforcePingPolicy(
  policy: PingPolicy,
  owns: (session: Http2Session) => boolean,
  clock: Clock,
  onViolation: (session: Http2Session, strikes: number) => void,
): () => void {
  const tracked = new WeakMap<Http2Session, Tracked>();

  const onPing = (session: Http2Session, state: Tracked) => {
    const now = clock.now();
    const tooSoon = state.lastPingAt !== undefined && now - state.lastPingAt < policy.minPingIntervalMs;
    const idle = state.openStreams === 0 && !policy.permitWithoutCalls;
    state.lastPingAt = now;
    if (!tooSoon && !idle) {
      state.strikes = 0;
      return;
    }
    state.strikes++;
    if (state.strikes <= policy.maxPingStrikes || session.destroyed) return;
    onViolation(session, state.strikes);
    session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from('too_many_pings'));
    setImmediate(() => session.destroy(undefined, constants.NGHTTP2_ENHANCE_YOUR_CALM));
  };

  const onStream = (message: unknown) => {
    const { stream } = message as { stream: ServerHttp2Stream };
    const session = stream.session;
    if (session === undefined) return;
    let state = tracked.get(session);
    if (state === undefined) {
      if (!owns(session)) return;
      const fresh: Tracked = { openStreams: 0, lastPingAt: undefined, strikes: 0 };
      tracked.set(session, fresh);
      session.on('ping', () => onPing(session, fresh));
      state = fresh;
    }
    const s = state;
    s.openStreams++;
    stream.once('close', () => s.openStreams--);
  };

  subscribe(CHANNEL, onStream);
  return () => unsubscribe(CHANNEL, onStream);
}
