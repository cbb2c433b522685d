/**
 * The wake sender's lookup of the replicas to wake, against dynalite and a real UDP socket standing
 * for a replica's wake endpoint: the session items are read again beside the wakes, before they
 * expire, so that while work keeps coming no wake waits for that read.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log.ts';
import { putSession } from '../../shared/table/agents/sessions.ts';
import { verifyWake } from '../../shared/wake/message.ts';
import { interceptedTable, operationOf } from '../../test/support/intercepted-table.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { useTestTables } from '../../test/support/table.ts';
import { WAKE_SESSIONS_CACHE_MS, WakeSender } from './sender.ts';

const tables = useTestTables();
const SECRET = 'wake-sender-secret-0123456789abcdef01234';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A replica's wake endpoint: the operation ids of the wakes it got, in order. */
async function replicaSocket(): Promise<{ port: number; named: string[] }> {
  const socket: Socket = createSocket('udp4');
  const named: string[] = [];
  socket.on('message', (datagram) => {
    const wake = verifyWake(SECRET, datagram);
    if (typeof wake === 'object') named.push(wake.operation?.id ?? '');
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => socket.close(() => r())));
  return { port: socket.address().port, named };
}

async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('the wake sender', () => {
  it('reads the sessions again beside a wake once they are three quarters of cacheMs old, so no later wake waits for the read', async () => {
    const base = await tables.fresh();
    const clock = new ManualClock(1_700_000_000_000);
    const replica = await replicaSocket();
    await putSession(base, { agentId: 'a1', zoneId: 'z', replicaId: 'r1', sessionId: 's1', wake: `127.0.0.1:${replica.port}`, connectedAt: clock.now(), leaseExpiresAt: clock.now() + 3_600_000, agentVersion: '1', staticAccounts: [] });
    let reads = 0;
    let hold: Promise<void> | undefined;
    let lastRead: Promise<unknown> = Promise.resolve();
    const table = interceptedTable(base, (command, send) => {
      if (operationOf(command) !== 'Query') return send(command);
      reads++;
      const held = hold;
      lastRead = (async () => {
        await held;
        return send(command);
      })();
      return lastRead;
    });
    const sender = new WakeSender({ table, clock, log: silentLogger(), secret: SECRET });
    cleanups.push(() => sender.close());
    const target = [{ zone: 'z', agents: ['a1'] }];
    // Operation ids are 32 hex digits: each wake's name is its number.
    const wake = (n: number) => sender.wake('operations', target, { id: n.toString(16).padStart(32, '0'), account: 'prod' });

    wake(1);
    await until(() => replica.named.length === 1);
    expect(reads).toBe(1);
    // Young enough: no read.
    await clock.advance(WAKE_SESSIONS_CACHE_MS / 2);
    wake(2);
    await until(() => replica.named.length === 2);
    expect(reads).toBe(1);

    // Old enough to read again: the wake goes out from what is kept while the read is held.
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    await clock.advance(WAKE_SESSIONS_CACHE_MS / 4 + 10);
    wake(3);
    await until(() => replica.named.length === 3);
    expect(reads).toBe(2);
    // One read at a time: another wake meanwhile shares it.
    wake(4);
    await until(() => replica.named.length === 4);
    expect(reads).toBe(2);
    release();
    hold = undefined;
    // The read beside the wakes has come back and is kept.
    await lastRead;
    await new Promise((r) => setImmediate(r));

    // Past the first read's cacheMs, within the second's: no read, no wait.
    await clock.advance(WAKE_SESSIONS_CACHE_MS / 2);
    wake(5);
    await until(() => replica.named.length === 5);
    expect(reads).toBe(2);
    expect(replica.named.map((id) => parseInt(id, 16))).toEqual([1, 2, 3, 4, 5]);
  });
});
