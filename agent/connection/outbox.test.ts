import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { silentLogger } from '../../shared/log.ts';
import type { AgentBody } from '../../shared/protocol/messages.ts';
import { REFUSED_BY_DRIVER, ResponseOutbox, type ReliableSink } from './outbox.ts';
import type { ResponseRetrySettings } from './settings.ts';

/** A stream stand-in whose acknowledgements the test settles by hand. */
class Sink implements ReliableSink {
  readonly sessionId: string;
  readonly sent: { account: string; seq: number; ack: () => void; fail: (e: unknown) => void }[] = [];
  #seq = 0;
  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }
  sendReliable(out: AgentBody) {
    const seq = ++this.#seq;
    let ack = () => {};
    let fail: (e: unknown) => void = () => {};
    const acked = new Promise<void>((resolve, reject) => {
      ack = resolve;
      fail = reject;
    });
    this.sent.push({ account: 'account' in out.body ? String(out.body.account) : '', seq, ack, fail });
    return { seq, acked };
  }
  end(): void {
    for (const s of this.sent) s.fail(new VendorError('unavailable', 'stream ended'));
  }
}

const result = (account: string): AgentBody => ({ kind: 'assignmentResult', body: { account, generation: 1, ok: true } });

function setup(retries?: ResponseRetrySettings) {
  const clock = new ManualClock(0);
  const retried: string[] = [];
  const outbox = new ResponseOutbox(retries, { clock, log: silentLogger(), onRetry: (out) => void retried.push(out.kind) });
  const stop = new AbortController();
  void outbox.run(stop.signal);
  return { clock, outbox, stop, retried };
}

const settled = (p: Promise<void>) => p.then(() => 'delivered', (e: Error) => e.message);

describe('ResponseOutbox', () => {
  it('sends at once on a live stream and resolves on the acknowledgement', async () => {
    const { outbox, stop } = setup();
    const sink = new Sink('s1');
    outbox.attach(sink);
    const p = settled(outbox.submit(result('prod')));
    await vi.waitFor(() => expect(sink.sent).toHaveLength(1));
    sink.sent[0]?.ack();
    expect(await p).toBe('delivered');
    expect(outbox.size).toBe(0);
    stop.abort();
  });

  it('writes a response on a live stream before submit returns, and never twice', async () => {
    const { outbox, stop } = setup();
    const sink = new Sink('s1');
    outbox.attach(sink);
    await new Promise((r) => setImmediate(r));
    const p = settled(outbox.submit(result('prod')));
    expect(sink.sent.map((s) => s.account)).toEqual(['prod']);
    await new Promise((r) => setImmediate(r));
    expect(sink.sent).toHaveLength(1);
    sink.sent[0]?.ack();
    expect(await p).toBe('delivered');
    stop.abort();
  });

  it('keeps the order when a response comes while older ones still wait to go out on a new stream', async () => {
    const { outbox, stop } = setup();
    const first = new Sink('s1');
    outbox.attach(first);
    const a = settled(outbox.submit(result('a')));
    outbox.detach();
    first.end();
    await new Promise((r) => setImmediate(r));
    const second = new Sink('s2');
    outbox.attach(second);
    const b = settled(outbox.submit(result('b')));
    await vi.waitFor(() => expect(second.sent.map((s) => s.account)).toEqual(['a', 'b']));
    for (const s of second.sent) s.ack();
    expect([await a, await b]).toEqual(['delivered', 'delivered']);
    stop.abort();
  });

  it('sends again, in order, on the next stream when the first ends before acknowledging', async () => {
    const { outbox, stop } = setup();
    const first = new Sink('s1');
    outbox.attach(first);
    const a = settled(outbox.submit(result('a')));
    const b = settled(outbox.submit(result('b')));
    await vi.waitFor(() => expect(first.sent).toHaveLength(2));
    outbox.detach();
    first.end();
    const second = new Sink('s2');
    outbox.attach(second);
    await vi.waitFor(() => expect(second.sent.map((s) => s.account)).toEqual(['a', 'b']));
    for (const s of second.sent) s.ack();
    expect([await a, await b]).toEqual(['delivered', 'delivered']);
    stop.abort();
  });

  it('counts a failed attempt every backOffMs while disconnected and drops after maxRetries', async () => {
    const { outbox, clock, stop, retried } = setup({ enabled: true, maxRetries: 2, backOffMs: 1000 });
    const p = settled(outbox.submit(result('prod')));
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    expect(retried).toEqual(['assignmentResult']);
    await clock.advance(999);
    expect(outbox.size).toBe(1);
    await clock.advance(1);
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    await clock.advance(1000);
    expect(await p).toBe('assignmentResult for prod not delivered after 3 attempts: not connected to the driver');
    // Two failed attempts were tried again; the third was the last.
    expect(retried).toEqual(['assignmentResult', 'assignmentResult']);
    stop.abort();
  });

  it('delivers a response made while disconnected once a stream comes within the retries', async () => {
    const { outbox, clock, stop } = setup({ enabled: true, maxRetries: 5, backOffMs: 1000 });
    const p = settled(outbox.submit(result('prod')));
    await vi.waitFor(() => expect(clock.pendingSleeps).toBe(1));
    await clock.advance(3000);
    const sink = new Sink('s1');
    outbox.attach(sink);
    await vi.waitFor(() => expect(sink.sent).toHaveLength(1));
    sink.sent[0]?.ack();
    expect(await p).toBe('delivered');
    stop.abort();
  });

  it('drops at the first failure when retries are disabled', async () => {
    const { outbox, stop, retried } = setup({ enabled: false, maxRetries: 1200, backOffMs: 3000 });
    expect(await settled(outbox.submit(result('prod')))).toBe(
      'assignmentResult for prod not delivered after 1 attempts: not connected to the driver',
    );
    expect(retried).toEqual([]);
    stop.abort();
  });

  it('drops at once a response the driver refused by name', async () => {
    const { outbox, stop } = setup();
    const sink = new Sink('s1');
    outbox.attach(sink);
    const p = settled(outbox.submit(result('ghost')));
    await vi.waitFor(() => expect(sink.sent).toHaveLength(1));
    sink.sent[0]?.fail(new VendorError('protocol_error', 'unknown account ghost', { details: { [REFUSED_BY_DRIVER]: true } }));
    expect(await p).toBe('unknown account ghost');
    expect(outbox.size).toBe(0);
    stop.abort();
  });

  it('counts as delivered what the driver says it processed on the previous session', async () => {
    const { outbox, stop } = setup();
    const first = new Sink('s1');
    outbox.attach(first);
    const a = settled(outbox.submit(result('a')));
    const b = settled(outbox.submit(result('b')));
    await vi.waitFor(() => expect(first.sent).toHaveLength(2));
    outbox.detach();
    first.end();
    const second = new Sink('s2');
    outbox.attach(second, { previousSessionId: 's1', lastProcessedSeq: 1 });
    expect(await a).toBe('delivered');
    await vi.waitFor(() => expect(second.sent.map((s) => s.account)).toEqual(['b']));
    second.sent[0]?.ack();
    expect(await b).toBe('delivered');
    stop.abort();
  });
});
