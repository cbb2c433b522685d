/**
 * HTTP/2 flow control for agent streams. Node's HTTP/2 server offers each stream a 64 KiB receive
 * window, and grpc-js gives no option to change it, so a batch of resource changes (hundreds of KB)
 * needed a window update round trip for every 64 KiB and throughput was bounded by latency. The
 * driver offers every agent stream a window of one largest message (`grpc.maxMessageBytes`): a whole
 * batch can be in flight, while a driver that falls behind still pushes back within that bound.
 *
 * Like the ping policy, it reaches the sessions through Node's `http2.server.stream.created`
 * diagnostics channel rather than into grpc-js.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Http2Session, ServerHttp2Stream } from 'node:http2';

const CHANNEL = 'http2.server.stream.created';

export function widenFlowWindow(windowBytes: number, owns: (session: Http2Session) => boolean): () => void {
  const widened = new WeakSet<Http2Session>();
  const onStream = (message: unknown) => {
    const session = (message as { stream: ServerHttp2Stream }).stream.session;
    if (session === undefined || widened.has(session) || session.destroyed || !owns(session)) return;
    widened.add(session);
    // The connection window covers every stream of the session; the stream window applies to each.
    session.setLocalWindowSize(2 * windowBytes);
    session.settings({ initialWindowSize: Math.min(windowBytes, 2 ** 31 - 1) });
  };
  subscribe(CHANNEL, onStream);
  return () => unsubscribe(CHANNEL, onStream);
}
