import { createSocket } from 'node:dgram';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../shared/log.ts';
import { encodeWake, type WakeTopic } from '../../shared/wake/message.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { startWakeEndpoint, type WakeOutcome } from './server.ts';

const SECRET = 'endpoint-test-secret-0123456789abcdef';

async function endpoint(maxPerSecond: number, clock: ManualClock) {
  const woken: WakeTopic[] = [];
  const outcomes: WakeOutcome[] = [];
  const e = await startWakeEndpoint({
    config: { host: '127.0.0.1', port: 0, maxAgeMs: 30_000, maxPerSecond },
    secret: SECRET,
    clock,
    log: silentLogger(),
    onWake: (t) => woken.push(t),
    counted: (o) => outcomes.push(o),
  });
  return { e, woken, outcomes };
}

async function send(port: number, datagrams: readonly Buffer[]): Promise<void> {
  const socket = createSocket('udp4');
  for (const d of datagrams) await new Promise<void>((resolve) => socket.send(d, port, '127.0.0.1', () => resolve()));
  socket.close();
}

describe('the wake endpoint', () => {
  it('takes at most maxPerSecond datagrams a second, valid or not, and drops the rest unchecked', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, woken, outcomes } = await endpoint(3, clock);
    try {
      await send(e.port, Array.from({ length: 10 }, () => encodeWake(SECRET, 'accounts', clock.now())));
      await vi.waitFor(() => expect(outcomes).toHaveLength(10));
      expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(3);
      expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(7);
      expect(woken).toEqual(['accounts', 'accounts', 'accounts']);
      // A second later the bucket is full again.
      await clock.advance(1_000);
      await send(e.port, [encodeWake(SECRET, 'operations', clock.now())]);
      await vi.waitFor(() => expect(woken).toEqual(['accounts', 'accounts', 'accounts', 'operations']));
    } finally {
      await e.close();
    }
  });

  it('hands a verified wake its topic and counts why others are ignored', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, woken, outcomes } = await endpoint(100, clock);
    try {
      const good = encodeWake(SECRET, 'operations', clock.now());
      const tampered = Buffer.from(good.toString('latin1').replace('operations', 'accounts'), 'latin1');
      await send(e.port, [good, good, tampered, encodeWake(SECRET, 'accounts', clock.now() - 60_000), Buffer.from('hello')]);
      await vi.waitFor(() => expect(outcomes).toHaveLength(5));
      expect(outcomes).toEqual(['accepted', 'replayed', 'forged', 'stale', 'malformed']);
      expect(woken).toEqual(['operations']);
    } finally {
      await e.close();
    }
  });
});
