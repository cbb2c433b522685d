import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { ConnectionLoss, DEFAULT_LOSS_GRACE_MS } from './connection-loss.ts';

function setup() {
  const clock = new ManualClock();
  const events: string[] = [];
  const loss = new ConnectionLoss({ clock, onLost: () => events.push('lost'), onBack: () => events.push('back') });
  return { clock, events, loss };
}

describe('when the connection to the driver counts as lost', () => {
  it('after the lease of the last welcome without a stream; back at the next welcome', async () => {
    const { clock, events, loss } = setup();
    loss.connected(1000);
    loss.disconnected();
    await clock.advance(999);
    expect(events).toEqual([]);
    expect(loss.lost).toBe(false);
    await clock.advance(1);
    expect(events).toEqual(['lost']);
    expect(loss.lost).toBe(true);
    // Dials that fail meanwhile change nothing.
    loss.disconnected();
    await clock.advance(5000);
    expect(events).toEqual(['lost']);
    loss.connected(1000);
    expect(events).toEqual(['lost', 'back']);
    expect(loss.lost).toBe(false);
  });

  it('a reconnect within the grace changes nothing', async () => {
    const { clock, events, loss } = setup();
    loss.connected(1000);
    loss.disconnected();
    await clock.advance(900);
    loss.connected(1000);
    await clock.advance(5000);
    expect(events).toEqual([]);
    // The grace starts again at the next end.
    loss.disconnected();
    await clock.advance(999);
    expect(events).toEqual([]);
    await clock.advance(1);
    expect(events).toEqual(['lost']);
  });

  it('nothing before the first welcome; the driver default lease when a welcome carries none', async () => {
    const { clock, events, loss } = setup();
    loss.disconnected();
    await clock.advance(DEFAULT_LOSS_GRACE_MS * 2);
    expect(events).toEqual([]);
    loss.connected(0);
    expect(loss.graceMs).toBe(DEFAULT_LOSS_GRACE_MS);
    loss.disconnected();
    await clock.advance(DEFAULT_LOSS_GRACE_MS - 1);
    expect(events).toEqual([]);
    await clock.advance(1);
    expect(events).toEqual(['lost']);
  });

  it('stops counting when the agent stops', async () => {
    const { clock, events, loss } = setup();
    loss.connected(1000);
    loss.disconnected();
    loss.stop();
    await clock.advance(2000);
    expect(events).toEqual([]);
  });
});
