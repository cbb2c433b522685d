/**
 * The cache module's handlers, run per account (docs/cache.md#the-drivers-side): a stream carries
 * the cache messages of every account its agent caches, and each handler may wait for the table
 * (the epoch rule's read, a resume query, a full writer). Handled one after another, every account
 * waited for the reads of all the others; here each message is taken off the stream at once and
 * run behind the earlier messages of its account only (`KeyedSerial`), and the session acknowledges
 * it once it is done, ahead of another account's earlier messages still waiting (`HandledLater`,
 * driver/agent-session.ts).
 *
 * While the table does not answer, a message is tried again with growing waits for as long as its
 * stream lasts, as the session does for the messages it runs itself; it is then acknowledged only
 * once it went through. A message whose stream ended before it started is not run: the agent sends
 * it again on its next stream.
 */
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { AgentSession } from '../agent-session.ts';
import { STORE_BACKOFF_MAX_MS, isStoreOutage, storeBackoff } from '../backoff.ts';
import type { AgentMessageHandler, AgentMessageHandlers, HandledLater, IncomingMessage } from '../handlers.ts';
import { KeyedSerial, type KeyedSerialOptions, type Slot, type WaitBound } from '../keyed-serial.ts';
import type { DriverMetrics } from '../metrics/metrics.ts';

/** The `bound` label of `vendor_driver_cache_stream_pauses_total`, in the limits' own words. */
const PAUSE_LABELS: Record<WaitBound, string> = { source: 'stream', key: 'account', bytes: 'bytes' };

/**
 * The bounds of the cache messages (docs/cache.md#the-drivers-side): `running` at once over every
 * stream; per stream, `perStream` waiting or running plus `perHolding` for each account its agent
 * caches as the account item confirms (not as the agent announces), at most `perAccount` of one
 * account, and at most `streamBytes` of them on the wire. An agent
 * keeps at most 4 batches of an account unacknowledged (agent/resources/batcher.ts), so accounts
 * stuck behind their table partitions fill their own share and the stream goes on being read for
 * the others; an agent that sends more of one account than `perAccount` stops its own stream only.
 */
export interface PerAccountLimits {
  running: number;
  perStream: number;
  perHolding: number;
  perAccount: number;
  streamBytes: number;
}

export const PER_ACCOUNT_DEFAULTS: PerAccountLimits = { running: 32, perStream: 64, perHolding: 8, perAccount: 8, streamBytes: 64 * 1024 * 1024 };

type CacheKind = 'resourceEvents' | 'resumeQuery' | 'podMetrics';

export function perAccountHandlers(
  handlers: Pick<AgentMessageHandlers, CacheKind>,
  deps: { clock: Clock; log: Logger; limits?: PerAccountLimits; metrics?: DriverMetrics | undefined },
): Pick<AgentMessageHandlers, CacheKind> {
  const serial = new KeyedSerial<AgentSession>({
    ...serialOptions(deps.limits ?? PER_ACCOUNT_DEFAULTS),
    onWait: (bound) => deps.metrics?.cacheStreamPauses.inc({ bound: PAUSE_LABELS[bound] }),
  });

  const run = async <K extends CacheKind>(kind: K, handler: AgentMessageHandler<K>, message: IncomingMessage<K>, session: AgentSession, slot: Slot): Promise<void> => {
    const backoff = storeBackoff(100, STORE_BACKOFF_MAX_MS);
    for (;;) {
      if (!session.open) throw new VendorError('unavailable', 'the agent stream has ended');
      try {
        await handler(message, session);
        return;
      } catch (e) {
        if (!isStoreOutage(e)) throw e;
        const waitMs = Math.round(backoff.failed());
        if (backoff.failures === 1) {
          deps.log.warn({ sessionId: session.id, agentId: session.agentId, account: message.body.account, kind, err: e instanceof Error ? e.message : e }, 'the table is not answering: the message waits');
        }
        // Waiting out the backoff holds no running place: other accounts' messages run meanwhile.
        await slot.idle(deps.clock.sleep(waitMs));
      }
    }
  };

  const keyed = <K extends CacheKind>(kind: K, key: (account: string) => string): AgentMessageHandler<K> | undefined => {
    const handler = handlers[kind] as AgentMessageHandler<K> | undefined;
    if (handler === undefined) return undefined;
    return (message, session): Promise<HandledLater> => serial.admit(session, key(message.body.account), (slot) => run(kind, handler, message, session, slot), message.bytes);
  };

  const out: Pick<AgentMessageHandlers, CacheKind> = {};
  const events = keyed('resourceEvents', (a) => a);
  const resume = keyed('resumeQuery', (a) => a);
  // Pod metrics have an order of their own (the parts of one reading) and none with the cache's.
  const metrics = keyed('podMetrics', (a) => `podMetrics\0${a}`);
  if (events !== undefined) out.resourceEvents = events;
  if (resume !== undefined) out.resumeQuery = resume;
  if (metrics !== undefined) out.podMetrics = metrics;
  return out;
}

function serialOptions(limits: PerAccountLimits): KeyedSerialOptions<AgentSession> {
  return {
    running: limits.running,
    perSource: limits.perStream,
    morePerSource: (session) => limits.perHolding * session.heldCount({ caching: true }),
    perKey: limits.perAccount,
    perSourceBytes: limits.streamBytes,
  };
}
